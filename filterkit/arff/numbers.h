/*
 * Numbers as text and text as numbers, for the compiled modules that read and write them: the
 * fast parser of short decimals (Clinger's exact case), defined here, inline, for the readers'
 * loops in filterkit/arff/_speedups.c and filterkit/formats/_lines.c alike; and the writer's
 * printers, in numbers.c (built into _speedups, setup.py).  Include after Python.h.
 */
#ifndef FILTERKIT_NUMBERS_H
#define FILTERKIT_NUMBERS_H

#include <Python.h>
#include <stdint.h>

/* A number's text takes up to this many bytes of the printers' room (the longest is 24;
   format_shortest's fixed-size copies may write up to 50 bytes). */
#define SHORTEST_ROOM 64

/* Parsing: inline, for the readers' loops (each module gets its copy of the table). */
static const double exact_powers[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Clinger's exact case: significand * 10^scale, for a significand below 2^53 and a power of
   ten of at most 22 either way, is one correctly rounded multiplication or division of two
   exactly representable doubles, so it equals the correctly rounded parse of the decimal.
   Sets *value (negated when ``negative``) and returns 1; returns 0 for anything else. */
static inline int
exact_decimal(uint64_t significand, int scale, int negative, double *value)
{
    if (significand >= ((uint64_t)1 << 53) || scale < -22 || scale > 22)
        return 0;
    double magnitude = (double)significand;
    if (scale < 0)
        magnitude /= exact_powers[-scale];
    else if (scale > 0)
        magnitude *= exact_powers[scale];
    *value = negative ? -magnitude : magnitude;
    return 1;
}

/* A decimal without exponent as exact_decimal takes it (scan_decimal finds it). */
typedef struct {
    uint64_t significand;   /* its significant digits (the first 17 or 18 of more) */
    int scale;              /* minus the number of digits after the point */
    int negative;           /* a '-' first */
    int significant_digits; /* all of them: more than 15 is not exact_decimal's case */
    int has_digit;          /* whether it has one: a sign or a point alone is not a number */
} ShortDecimal;

/* One more digit of *decimal, without branches (a leading zero is no rarer than another): the
   significand stops growing before it could overflow, long past 15 digits. */
static inline void
add_digit(ShortDecimal *decimal, unsigned int digit)
{
    decimal->significand = decimal->significand < UINT64_C(100000000000000000) ? decimal->significand * 10 + digit
                                                                                 : decimal->significand;
    decimal->significant_digits += decimal->significand != 0;
}

/* Scans [+-], digits and one point from text (before end) into *decimal; returns where it stops. */
static inline const char *
scan_decimal(const char *text, const char *end, ShortDecimal *decimal)
{
    ShortDecimal found = {0, 0, 0, 0, 0};
    const char *digits = text;
    if (text < end && (*text == '+' || *text == '-'))
        found.negative = *digits++ == '-';
    for (text = digits; text < end && *text >= '0' && *text <= '9'; text++)
        add_digit(&found, (unsigned int)(*text - '0'));
    found.has_digit = text > digits;
    if (text < end && *text == '.') {
        const char *fraction = ++text;
        for (; text < end && *text >= '0' && *text <= '9'; text++)
            add_digit(&found, (unsigned int)(*text - '0'));
        found.scale = -(int)(text - fraction);
        found.has_digit |= text > fraction;
    }
    *decimal = found;
    return text;
}

/* The size bytes at text as a number ([+-], digits with an optional point or a point and
   digits, no exponent) when exact_decimal's case holds it (at most 15 significant digits);
   0 for anything else, which Python's parser (or strtod) then reads. */
static inline int
parse_simple(const char *text, Py_ssize_t size, double *value)
{
    ShortDecimal decimal;
    return scan_decimal(text, text + size, &decimal) == text + size && decimal.has_digit
           && decimal.significant_digits <= 15
           && exact_decimal(decimal.significand, decimal.scale, decimal.negative, value);
}

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
