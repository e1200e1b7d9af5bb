extern void reach_error(void);
extern unsigned int __VERIFIER_nondet_uint(void);
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); } }

int main(void) {
    unsigned int n = __VERIFIER_nondet_uint();
    if (n > 100) return 0;
    unsigned char sum = 0;
    for (unsigned int i = 0; i < n; i++) {
        sum += 3;
    }
    __VERIFIER_assert(sum == 3 * n);
    return 0;
}
