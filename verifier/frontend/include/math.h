/* Quokka's math.h: declarations only (floating point is unsupported). */
#ifndef __QUOKKA_MATH_H
#define __QUOKKA_MATH_H
extern double sqrt(double __x);
extern double fabs(double __x);
extern double floor(double __x);
extern double ceil(double __x);
extern double pow(double __x, double __y);
extern double exp(double __x);
extern double log(double __x);
extern float sqrtf(float __x);
extern float fabsf(float __x);
#endif
