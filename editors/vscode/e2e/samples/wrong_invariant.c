extern void reach_error(void);
extern int __VERIFIER_nondet_int(void);
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); } }

int main(void) {
    int n = __VERIFIER_nondet_int();
    if (n < 0 || n > 1000) return 0;
    int i = 0, s = 0;
    /*@ loop invariant s == 3*i; */
    while (i < n) {
        i = i + 1;
        s = s + 2;
    }
    __VERIFIER_assert(s == 2 * n);
    return 0;
}
