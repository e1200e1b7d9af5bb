/* Quokka's stddef.h */
#ifndef __QUOKKA_STDDEF_H
#define __QUOKKA_STDDEF_H
#ifndef __QUOKKA_SIZE_T
#define __QUOKKA_SIZE_T
#ifdef __QUOKKA_LP64__
typedef unsigned long size_t;
#else
typedef unsigned int size_t;
#endif
#endif
#ifdef __QUOKKA_LP64__
typedef long ptrdiff_t;
#else
typedef int ptrdiff_t;
#endif
#ifndef NULL
#define NULL ((void *)0)
#endif
#endif
