/* Quokka's stdlib.h: the declarations SV-COMP programs use. */
#ifndef __QUOKKA_STDLIB_H
#define __QUOKKA_STDLIB_H
#include <stddef.h>
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 2147483647
extern void abort(void);
extern void exit(int __status);
extern void _Exit(int __status);
extern void *malloc(size_t __size);
extern void *calloc(size_t __nmemb, size_t __size);
extern void *realloc(void *__ptr, size_t __size);
extern void *alloca(size_t __size);
extern void free(void *__ptr);
extern int abs(int __x);
extern long labs(long __x);
extern long long llabs(long long __x);
extern int rand(void);
extern void srand(unsigned int __seed);
extern int atoi(const char *__s);
#endif
