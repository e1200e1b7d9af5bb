"""The C program the language-model tests use, and what the tiny model is taught to answer."""

SOURCE = """extern int __VERIFIER_nondet_int(void);
extern void abort(void);
void reach_error(void) {}
void assume_abort_if_not(int cond) { if (!cond) abort(); }
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); } }
int main() {
  int n = __VERIFIER_nondet_int();
  assume_abort_if_not(n >= 0 && n <= 100);
  int i = 0;
  int s = 0;
  while (i < n) {
    i = i + 1;
    s = s + 3;
  }
  __VERIFIER_assert(s == 3 * n);
  return 0;
}
"""
LINE = 11  # the insertion point of the loop on line 11 (the loop keyword line)
# What the tiny model is taught to answer: two good invariants, one with a wrong constant (for
# template completion) and one assignment (to be rejected).
TAUGHT = (
    f"After line {LINE}, insert assume(s == 9*i);\n"
    f"After line {LINE}, insert assume(i <= n);\n"
    f"After line {LINE}, insert assume(n = 3);"
)
