/* Quokka's assert.h: `assert(e)` is an assertion of the verifier (Assert(e) in the IR). */
#ifndef __QUOKKA_ASSERT_H
#define __QUOKKA_ASSERT_H
extern void __assert_fail(const char *__assertion, const char *__file, unsigned int __line,
                          const char *__function);
extern void __quokka_assert();
#endif

#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) __quokka_assert(e)
#endif
