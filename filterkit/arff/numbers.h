/*
 * Numbers as text and text as numbers (numbers.c), shared by the compiled modules that read and
 * write them: filterkit/arff/_speedups.c and filterkit/formats/_lines.c are each built with
 * numbers.c (setup.py).  Include after Python.h.
 */
#ifndef FILTERKIT_NUMBERS_H
#define FILTERKIT_NUMBERS_H

#include <Python.h>
#include <stdint.h>

/* A number's text takes up to this many bytes of the printers' room (the longest is 24;
   format_shortest's fixed-size copies may write up to 50 bytes). */
#define SHORTEST_ROOM 64

/* Clinger's exact case: significand * 10^scale, for a significand below 2^53 and a power of
   ten of at most 22 either way, is one correctly rounded multiplication or division of two
   exactly representable doubles, so it equals the correctly rounded parse of the decimal.
   Sets *value (negated when ``negative``) and returns 1; returns 0 for anything else. */
int exact_decimal(uint64_t significand, int scale, int negative, double *value);

/* The size bytes at text as a number ([+-], digits with an optional point or a point and
   digits, no exponent) when exact_decimal's case holds it (at most 15 significant digits);
   0 for anything else, which Python's parser (or strtod) then reads. */
int parse_simple(const char *text, Py_ssize_t size, double *value);

/* 10^n for n in [0, 19]. */
uint64_t ten_to(int n);

/* "00" to "99": two decimal digits at a time. */
extern const char digit_pairs[];

/* repr(value) for a finite non-zero value into text (SHORTEST_ROOM bytes): its length, or 0
   when unsure (Python's formatter then decides). */
int format_shortest(double value, char *text);

/* The shortest decimal that reads back as the float32 value (a double, exactly a float32;
   finite, not 0) into text (SHORTEST_ROOM bytes), as the writer's exact format writes that
   decimal's double: its length, or 0 when unsure. */
int format_float32(double value, char *text);

/* The finite non-integral value correctly rounded to digits (1 to 16) significant digits:
   its text in text (SHORTEST_ROOM bytes) and its length when the decimal of at most 15
   digits is its own shortest text; 0 with the decimal's double in *rounded when that is
   exactly computed (the writer's exact format then writes it); -1 when unsure. */
int format_rounded(double value, int digits, char *text, double *rounded);

#endif
