/* Quokka's stdio.h: declarations only (calls with strings are unsupported). */
#ifndef __QUOKKA_STDIO_H
#define __QUOKKA_STDIO_H
#include <stddef.h>
typedef struct __quokka_FILE FILE;
extern FILE *stdin;
extern FILE *stdout;
extern FILE *stderr;
#define EOF (-1)
extern int printf(const char *__format, ...);
extern int fprintf(FILE *__stream, const char *__format, ...);
extern int sprintf(char *__s, const char *__format, ...);
extern int snprintf(char *__s, size_t __n, const char *__format, ...);
extern int scanf(const char *__format, ...);
extern int puts(const char *__s);
extern int putchar(int __c);
extern int getchar(void);
#endif
