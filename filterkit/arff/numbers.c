/*
 * The writer's printers of numbers (built into filterkit.arff._speedups for format_rows.c):
 * a double's shortest text (format_shortest), its float32's (format_float32) and its rounding
 * to a number of significant digits (format_rounded).  The printers need a 128-bit
 * integer type; without one (MSVC) they decline every number and Python's formatter decides.
 * See numbers.h.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "numbers.h"

/* 10^n for n in [0, 19]. */
uint64_t
ten_to(int n)
{
    uint64_t power = 1;
    while (n-- > 0)
        power *= 10;
    return power;
}

const char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

#ifdef __SIZEOF_INT128__
#include "_powers_of_ten.h"

typedef unsigned __int128 uint128;

/*
 * The grid search below (shortest_decimal) gives format_float32 a float32's shortest decimal, and
 * gave format_shortest repr(x) before Schubfach (further down) replaced it there: exactly as Python's
 * David Gay shortest round-trip mode, or 0 when it cannot be sure (then Python's formatter decides).
 *
 * With x = m * 2^e, the decimals that read back as x are those strictly between
 * lo = (4m - g) * 2^(e-2) and hi = (4m + 2) * 2^(e-2), and the boundaries too when m is even
 * (reading rounds half to even); g = 2, or 1 for a power of two whose lower neighbour is
 * half as far away.  The scale 10^k puts x * 10^k in [10^17, 2 * 10^18), where the interval
 * is more than 10 units wide.  The shortest decimals in it are the multiples of the largest
 * power 10^t that has a multiple in it, and repr takes the one nearest to x (Gay's shortest
 * mode is Steele & White's free format: it stops at the first digit where rounding x down or
 * up stays inside, and takes the nearer).
 *
 * The three scaled values come from n * 10^k with 10^k taken as a 128-bit significand
 * rounded to nearest (relative error below 2^-128): the 192-bit product is exact, so each
 * result is within 2^-63 of the true value (which is below 2^61; fractions keep 64 bits).
 * Integer parts and the comparisons are therefore exact unless a fraction lies within
 * NEAR_MARGIN of an integer, or x * 10^k within NEAR_MARGIN of the midpoint between two
 * candidates.  Those cases return 0, except a scaled value that is provably a whole number
 * (x = 0.5, or a boundary that is a short decimal: see integer_part_unsure).  An exact tie
 * (Gay rounds it half to even) also returns 0, as do whole scaled values when k < 0 (some
 * integers from 10^18 up).
 * tests/arff/test_arff_speedups.py compares the results with repr on millions of doubles.
 */
#define NEAR_MARGIN ((uint64_t)1 << 24) /* 2^-40 in units of 2^-64; the error is below 2 units */

typedef struct {
    uint64_t integer;  /* integer part of n * 2^(e-2) * 10^k, as computed */
    uint64_t fraction; /* its fraction, in units of 2^-64 */
} Scaled;

/* n * significand * 2^-shift, with shift in [64, 128) (checked in make_powers_of_ten.py). */
static Scaled
scale_by_power(uint64_t n, const PowerOfTen *power, int shift)
{
    uint128 low_part = (uint128)n * power->low;
    uint128 high_part = (uint128)n * power->high;
    uint64_t word0 = (uint64_t)low_part;
    uint128 upper = high_part + (low_part >> 64); /* product >> 64; no carry out: the product is below 2^192 */
    int within = shift - 64;
    Scaled result;
    result.integer = (uint64_t)(upper >> within);
    result.fraction = (uint64_t)((((uint128)(uint64_t)upper << 64) | word0) >> within);
    return result;
}

static int
near_integer(uint64_t fraction)
{
    return fraction < NEAR_MARGIN || fraction > UINT64_MAX - NEAR_MARGIN;
}

/* Whether value, computed for n * 2^(exponent-2) * 10^k, may have the wrong integer part: its
   fraction is within NEAR_MARGIN of an integer, and is not exactly 0 for a product that is
   provably whole (k >= 0 and enough factors of two). */
static int
integer_part_unsure(Scaled value, uint64_t n, int exponent, int k)
{
    if (!near_integer(value.fraction))
        return 0;
    return value.fraction != 0 || k < 0 || exponent - 2 + k + __builtin_ctzll(n) < 0;
}

typedef struct {
    uint64_t below, above; /* the candidates, in units of unit: below < candidate <= above */
    uint64_t nearest;      /* floor(x * 10^k / unit) */
    uint64_t unit;         /* 10^t */
    int t;
} Grid;

/* A grid 10^digits (= power) times coarser, if the interval holds one of its points. */
static inline void
coarsen(Grid *grid, uint64_t power, int digits)
{
    if (grid->above / power > grid->below / power) {
        grid->below /= power;
        grid->above /= power;
        grid->nearest /= power;
        grid->unit *= power;
        grid->t += digits;
    }
}

/* The eight decimal digits of number < 10^8, leading zeros included. */
static void
write_eight_digits(uint32_t number, char *text)
{
    uint32_t high = number / 10000, low = number % 10000;
    memcpy(text, digit_pairs + 2 * (high / 100), 2);
    memcpy(text + 2, digit_pairs + 2 * (high % 100), 2);
    memcpy(text + 4, digit_pairs + 2 * (low / 100), 2);
    memcpy(text + 6, digit_pairs + 2 * (low % 100), 2);
}

/* A decimal 0.DIGITS * 10^point, DIGITS being the count decimal digits of significand
   (the first non-zero; count <= 18). */
typedef struct {
    uint64_t significand;
    int count;
    int point;
} Decimal;

/* The shortest decimal in the interval of doubles that read back as x = mantissa * 2^exponent:
   (4 * mantissa - lower_gap, 4 * mantissa + upper_gap) * 2^(exponent-2), the boundaries
   included when ``even`` (see the comment above NEAR_MARGIN); the nearest to x of the
   shortest.  0 when unsure.  With the gaps of a double's neighbours this is repr's decimal;
   with a float32's (format_float32), the float32's shortest. */
static int
shortest_decimal(uint64_t mantissa, int exponent, uint64_t lower_gap, uint64_t upper_gap, int even, Decimal *result)
{
    int binary_magnitude = exponent + 63 - __builtin_clzll(mantissa); /* floor(log2 |value|) */
    int k = 17 - ((binary_magnitude * 78913) >> 18);                  /* 17 - floor(log10 2^magnitude) */
    const PowerOfTen *power = &powers_of_ten[k - POWERS_OF_TEN_MIN_EXPONENT];
    int shift = -(exponent - 2 + power->binary_exponent);
    uint64_t n = mantissa << 2;
    Scaled low = scale_by_power(n - lower_gap, power, shift);
    Scaled high = scale_by_power(n + upper_gap, power, shift);
    Scaled middle = scale_by_power(n, power, shift);
    if (integer_part_unsure(low, n - lower_gap, exponent, k) || integer_part_unsure(high, n + upper_gap, exponent, k)
        || integer_part_unsure(middle, n, exponent, k))
        return 0;

    /* Scaled, the decimals that read back as x are the integers in (below, above]: a boundary
       whose fraction is 0 is now known to be whole, and belongs to the interval when m is even
       (reading rounds half to even).  The unit grows from 1 to the largest power 10^t with a
       multiple in the interval (t >= 1 as the interval is over 10 wide), in steps of 16, 8, 4,
       2 and 1 digits. */
    Grid grid = {low.integer - (low.fraction == 0 && even), high.integer - (high.fraction == 0 && !even),
                 middle.integer, 1, 0};
    coarsen(&grid, UINT64_C(10000000000000000), 16);
    coarsen(&grid, 100000000, 8);
    coarsen(&grid, 10000, 4);
    coarsen(&grid, 100, 2);
    coarsen(&grid, 10, 1);
    uint64_t candidate = grid.nearest, unit = grid.unit;
    int t = grid.t;
    /* x * 10^k - candidate * unit, in units of 2^-64, against half a unit: round to the nearer. */
    uint128 offset = ((uint128)(middle.integer - candidate * unit) << 64) | middle.fraction;
    uint128 half_unit = (uint128)unit << 63;
    if (offset < half_unit + NEAR_MARGIN && offset + NEAR_MARGIN > half_unit)
        return 0;
    candidate += offset > half_unit;
    if (candidate <= grid.below) /* the nearer multiple is outside the interval: take the other one */
        candidate = grid.below + 1;
    else if (candidate > grid.above)
        candidate = grid.above;

    /* candidate * unit lies in [10^17, 2 * 10^18): x * 10^k >= 10^17, and 10^17 is a multiple of
       unit (when unit <= 10^17) that is never nearer to it; so candidate has at most 18 digits. */
    result->significand = candidate;
    result->count = 18 + (candidate * unit >= UINT64_C(1000000000000000000)) - t;
    result->point = result->count + t - k; /* Gay's decpt */
    return 1;
}

/* The rounding of x = mantissa * 2^exponent to ``digits`` significant digits (at most 16),
   without trailing zeros; 0 when x lies too near the middle of two such decimals to be
   sure (an exact tie among them, which Python rounds half to even). */
static int
rounded_decimal(uint64_t mantissa, int exponent, int digits, Decimal *result)
{
    int binary_magnitude = exponent + 63 - __builtin_clzll(mantissa);
    int k = 17 - ((binary_magnitude * 78913) >> 18);
    const PowerOfTen *power = &powers_of_ten[k - POWERS_OF_TEN_MIN_EXPONENT];
    Scaled middle = scale_by_power(mantissa << 2, power, -(exponent - 2 + power->binary_exponent));
    /* x * 10^k is in [10^17, 2 * 10^18): 18 or 19 digits before the point, of which the
       first ``digits`` are kept; an error in the integer part (within 2^-63) only matters
       near the middle, which is checked. */
    int whole_digits = 18 + (middle.integer >= UINT64_C(1000000000000000000));
    uint64_t unit = ten_to(whole_digits - digits);
    uint64_t kept = middle.integer / unit;
    uint128 offset = ((uint128)(middle.integer % unit) << 64) | middle.fraction;
    uint128 half_unit = (uint128)unit << 63;
    if (offset < half_unit + NEAR_MARGIN && offset + NEAR_MARGIN > half_unit)
        return 0;
    kept += offset > half_unit;
    int point = whole_digits - k;
    int count = digits;
    if (kept == ten_to(digits)) { /* 9.99... rounded up to 10.0 */
        kept /= 10;
        point++;
    }
    while (kept % 10 == 0) {
        kept /= 10;
        count--;
    }
    result->significand = kept;
    result->count = count;
    result->point = point;
    return 1;
}

/* The decimal as repr lays out its double (sign, then 0.000DIGITS, DIG.ITS, DIGITS000.0 or
   D.IGITSe-05), or, where it is a whole number below 2**53, as the writer writes integers
   (``integers``).  Its length. */
static int
write_decimal(char *text, int negative, Decimal decimal, int integers)
{
    int count = decimal.count, point = decimal.point;
    char padded[56] = {0}; /* the digits in 18 places with leading zeros, then room for the copies below */
    uint64_t significand = decimal.significand;
    memcpy(padded, digit_pairs + 2 * (significand / UINT64_C(10000000000000000)), 2);
    write_eight_digits((uint32_t)(significand / 100000000 % 100000000), padded + 2);
    write_eight_digits((uint32_t)(significand % 100000000), padded + 10);
    const char *digits = padded + 18 - count;

    /* The fixed-size copies (inlined by the compiler) carry bytes past the end that later
       writes replace or that lie beyond the returned length. */
    char *out = text;
    if (negative)
        *out++ = '-';
    if (integers && point >= count
        && (point < 16 || (point == 16 && significand * ten_to(16 - count) < UINT64_C(9007199254740992)))) {
        memcpy(out, digits, 32);
        memset(out + count, '0', 16);
        out += point;
    } else if (point > -4 && point <= 16) {
        if (point <= 0) { /* 0.000DIGITS */
            memcpy(out, "0.000", 5);
            out += 2 - point;
            memcpy(out, digits, 32);
            out += count;
        } else if (point < count) { /* DIG.ITS */
            memcpy(out, digits, 16);
            out[point] = '.';
            memcpy(out + point + 1, digits + point, 32);
            out += count + 1;
        } else { /* DIGITS000.0 */
            memcpy(out, digits, 32);
            memset(out + count, '0', 16);
            out += point;
            memcpy(out, ".0", 2);
            out += 2;
        }
    } else { /* D.IGITSe-05 */
        out[0] = digits[0];
        out[1] = '.';
        memcpy(out + 2, digits + 1, 32);
        out += count > 1 ? count + 1 : 1;
        int decimal_exponent = point - 1;
        *out++ = 'e';
        *out++ = decimal_exponent < 0 ? '-' : '+';
        int magnitude = decimal_exponent < 0 ? -decimal_exponent : decimal_exponent;
        if (magnitude >= 100)
            *out++ = (char)('0' + magnitude / 100);
        memcpy(out, digit_pairs + 2 * (magnitude % 100), 2);
        out += 2;
    }
    return (int)(out - text);
}

/* A finite non-zero double as mantissa * 2^exponent, the mantissa's top bit at 52 for
   normal doubles. */
static void
split_double(double value, uint64_t *mantissa, int *exponent)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof(bits));
    int biased_exponent = (int)(bits >> 52) & 0x7ff;
    uint64_t fraction_bits = bits & (((uint64_t)1 << 52) - 1);
    *mantissa = biased_exponent ? fraction_bits | ((uint64_t)1 << 52) : fraction_bits;
    *exponent = biased_exponent ? biased_exponent - 1075 : -1074; /* |value| = mantissa * 2^exponent */
}

/*
 * Schubfach (R. Giulietti, "The Schubfach way to render doubles", 2020), as the benchmark's C floor
 * has it (benchmarks/floor/floor.c, where its comment gives the reasoning): v = c 2^q, its rounding
 * interval's ends and v itself scaled by 10^-k through g (above_powers_of_ten) with products rounded to
 * odd, which decide every comparison exactly.  The shortest decimals in the interval, the nearest to v
 * of them (the even one on a tie): repr's choice, with no case left unsure.  It replaced the grid
 * search below for doubles (which float32 still uses): 38 ns a number on grain's l2 values, 27 ns
 * with it.
 */
static inline int
floor_log10_pow2(int e)
{
    return (int)(((int64_t)e * 661971961083LL) >> 41);
}

static inline int
floor_log10_three_quarters_pow2(int e)
{
    return (int)(((int64_t)e * 661971961083LL - 274743187321LL) >> 41);
}

static inline int
floor_log2_pow10(int e)
{
    return (int)(((int64_t)e * 913124641741LL) >> 38);
}

/* g x / 2^127 rounded to odd (section 9.8 of the paper). */
static inline uint64_t
times_rounded_to_odd(uint128 g, uint64_t x)
{
    uint64_t g1 = (uint64_t)(g >> 63), g0 = (uint64_t)g & ((UINT64_C(1) << 63) - 1);
    uint64_t x1 = (uint64_t)(((uint128)g0 * x) >> 64);
    uint128 y = (uint128)g1 * x;
    uint64_t z = ((uint64_t)y >> 1) + x1;
    uint64_t integer = (uint64_t)(y >> 64) + (z >> 63);
    return integer | ((z & ((UINT64_C(1) << 63) - 1)) != 0);
}

/* The shortest decimal d 10^exponent that reads back as c 2^q (the nearest on a tie of lengths,
   the even one on a tie of distances): d, which may end in zeros. */
static inline uint64_t
schubfach_decimal(uint64_t c, int q, int *exponent)
{
    uint64_t even = !(c & 1), four_c = c << 2, upper = four_c + 2, lower;
    int k;
    if (c != UINT64_C(1) << 52 || q == -1074) {
        lower = four_c - 2;
        k = floor_log10_pow2(q);
    } else { /* a power of two: the gap below is half the gap above */
        lower = four_c - 1;
        k = floor_log10_three_quarters_pow2(q);
    }
    int shift = q + floor_log2_pow10(-k) + 2;
    const uint64_t *above = above_powers_of_ten[-k - ABOVE_POWERS_MIN_EXPONENT];
    uint128 g = ((uint128)above[0] << 64) | above[1];
    uint64_t v4 = times_rounded_to_odd(g, four_c << shift);
    uint64_t lower4 = times_rounded_to_odd(g, lower << shift) + !even;
    uint64_t upper4 = times_rounded_to_odd(g, upper << shift) - !even;
    *exponent = k;
    uint64_t s = v4 >> 2, tens_below = s / 10 * 10, tens_above = tens_below + 10;
    int below_in = lower4 <= tens_below << 2, above_in = tens_above << 2 <= upper4;
    if (below_in != above_in)
        return below_in ? tens_below : tens_above;
    int s_in = lower4 <= s << 2, next_in = (s + 1) << 2 <= upper4;
    if (s_in != next_in)
        return s_in ? s : s + 1;
    uint64_t midpoint = (s << 2) + 2;
    return v4 < midpoint || (v4 == midpoint && !(s & 1)) ? s : s + 1;
}

static const uint64_t powers_of_ten_below_2_64[20] = {
    UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000), UINT64_C(100000),
    UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000), UINT64_C(1000000000),
    UINT64_C(10000000000), UINT64_C(100000000000), UINT64_C(1000000000000), UINT64_C(10000000000000),
    UINT64_C(100000000000000), UINT64_C(1000000000000000), UINT64_C(10000000000000000),
    UINT64_C(100000000000000000), UINT64_C(1000000000000000000), UINT64_C(10000000000000000000)};

/* repr(value) for a finite non-zero value into text; its length (never 0: Schubfach is sure). */
int
format_shortest(double value, char *text)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof(bits));
    uint64_t fraction = bits & ((UINT64_C(1) << 52) - 1);
    int biased = (int)((bits >> 52) & 0x7ff), exponent;
    uint64_t c = biased ? fraction | (UINT64_C(1) << 52) : fraction;
    uint64_t significand = schubfach_decimal(c, (biased ? biased : 1) - 1075, &exponent);
    while (significand % 10 == 0) {
        significand /= 10;
        exponent++;
    }
    int count = ((64 - __builtin_clzll(significand)) * 1233) >> 12; /* its digits, or one fewer */
    count += significand >= powers_of_ten_below_2_64[count];
    Decimal decimal = {significand, count, count + exponent};
    return write_decimal(text, (int)(bits >> 63), decimal, 0);
}

/* The writer's text for the float32 value (a double, exactly a float32; finite, not 0):
   the shortest decimal that reads back (to nearest) as it, laid out as that decimal's
   double would be (with at most 9 digits, the decimal itself); 0 when unsure. */
int
format_float32(double value, char *text)
{
    uint64_t mantissa;
    int exponent;
    split_double(value, &mantissa, &exponent); /* a float32 is a normal double: bit 52 set */
    int binary_magnitude = exponent + 52;
    /* the float32's last place, and its neighbours' half distances in units of 2^(exponent-2) */
    int last_place = binary_magnitude - 23 > -149 ? binary_magnitude - 23 : -149;
    int place_bit = last_place - exponent;
    uint64_t upper_gap = (uint64_t)1 << (place_bit + 1);
    uint64_t lower_gap = (mantissa == ((uint64_t)1 << 52) && binary_magnitude >= -125) ? upper_gap / 2 : upper_gap;
    Decimal decimal;
    if (!shortest_decimal(mantissa, exponent, lower_gap, upper_gap, !((mantissa >> place_bit) & 1), &decimal))
        return 0;
    return write_decimal(text, signbit(value) != 0, decimal, 1);
}

int
format_rounded(double value, int digits, char *text, double *rounded)
{
    uint64_t mantissa;
    int exponent;
    Decimal decimal;
    split_double(value, &mantissa, &exponent);
    if (!rounded_decimal(mantissa, exponent, digits, &decimal))
        return -1;
    /* A decimal of at most 15 digits in the normal range reads back as a double whose
       shortest text is the decimal itself. */
    if (digits <= 15 && decimal.point >= -306 && decimal.point <= 308)
        return write_decimal(text, signbit(value) != 0, decimal, 1);
    /* |value| rounded = significand * 10^(point - count): one correctly rounded operation */
    if (!exact_decimal(decimal.significand, decimal.point - decimal.count, signbit(value) != 0, rounded))
        return -1;
    return 0;
}

#else

int
format_shortest(double value, char *text)
{
    return 0;
}

int
format_float32(double value, char *text)
{
    return 0;
}

int
format_rounded(double value, int digits, char *text, double *rounded)
{
    return -1;
}

#endif
