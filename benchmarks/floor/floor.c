/*
 * floor: what one core of plain C takes for filterkit's benchmark jobs (issue 20, item 1).
 *
 *     gcc -O2 -o floor benchmarks/floor/floor.c -lm
 *     floor identity|l2|shape [-c first|last|N] IN.arff > OUT.arff
 *     floor print < BIT_PATTERNS > TEXTS
 *
 * The input is read with mmap, rows are parsed into (index, double) entries, the job is
 * done, and each number is written in Python's shortest round-trip form through one
 * reused 1 MiB output buffer.  It reads the subset of ARFF the benchmark uses (sparse
 * rows "{i v,i v,...}", numeric attributes and a nominal class, no weights, quotes or
 * missing values) and refuses anything else with exit status 2; the header is copied
 * as it is.  From the @data line on, `identity` and `l2` write exactly filterkit's bytes
 * (`filterkit [-c first] IN` and `filterkit -c first IN l2`: the same sequential sum of
 * squares, square root and division).  `shape` is a two-pass job shaped like
 * `filterkit shape bns l2`: pass 1 counts, per feature, the rows and positives at each
 * count value (capped at 31) and per class; pass 2 maps each value to the Laplace
 * estimate (pos+1)/(n+2) at its count minus the one at 0, times the feature's
 * bi-normal separation, then normalizes the row to unit length.  It does the same
 * amount of work as filterkit's chain, not the same arithmetic (no neighbour windows).
 *
 * Numbers: an integral value below 2^53 is written as an integer; any other finite
 * value as the shortest decimal that reads back to the same double, the closest one
 * when several are as short, laid out as Python's repr ("0.1", "1e-05", "1.5e+16").
 * The digits come from Schubfach (Giulietti 2020; see "shortest round-trip formatting"),
 * a Ryu-class printer: three 64 x 126-bit products per number, no loop, no trial; its
 * table of 617 powers of ten is computed exactly at start-up.  `floor print` formats
 * hex bit patterns read from stdin, one per line, for tests/test_benchmark_floor.py.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum job { IDENTITY, L2, SHAPE };

#define OUT_SIZE (1 << 20)
#define MAX_COUNT 31

static char out[OUT_SIZE + 512];
static size_t out_used;

static void flush_out(void) {
    size_t done = 0;
    while (done < out_used) {
        ssize_t wrote = write(STDOUT_FILENO, out + done, out_used - done);
        if (wrote < 0) {
            if (errno == EINTR)
                continue;
            perror("floor: write");
            exit(1);
        }
        done += (size_t)wrote;
    }
    out_used = 0;
}

static void put(const char *text, size_t length) {
    if (out_used + length > OUT_SIZE)
        flush_out();
    if (length > OUT_SIZE) {
        ssize_t wrote = write(STDOUT_FILENO, text, length);
        if (wrote != (ssize_t)length) {
            perror("floor: write");
            exit(1);
        }
        return;
    }
    memcpy(out + out_used, text, length);
    out_used += length;
}

static void refuse(const char *why, size_t line) {
    fprintf(stderr, "floor: line %zu: %s (the floor reads only the benchmark's kind of ARFF)\n", line, why);
    exit(2);
}

/* ---- shortest round-trip formatting: Schubfach -------------------------------------- */
/*
 * R. Giulietti, "The Schubfach way to render doubles" (2020).  A finite double is
 * v = c 2^q (c < 2^53).  Its rounding interval R_v runs from the midpoint with its lower
 * neighbour to the one with its upper neighbour (ends included when c is even, as a
 * round-half-even reader maps them to v).  With k = floor(log10(2^q)) (floor(log10(3/4 2^q))
 * at the lopsided interval of a power of two), 10^-k is approximated from above by
 * g 2^r with 2^125 <= g < 2^126, and v and the two ends, in units of 10^k times 4, are
 * the products 4c g 2^(q+r), rounded to odd (sections 9.7-9.8), which the paper shows
 * decide every comparison below exactly.  s = floor(v 10^-k) has 16 or 17 digits (fewer
 * for a subnormal) and the interval is narrower than 10 of its units, so the shortest
 * decimals in R_v are: the one multiple of 10 units that lies in it, if any; else whichever
 * of s and s + 1 lies in it, the nearer to v when both do, the even one on a tie (section
 * 9.3).  That is repr's choice (shortest, then nearest); unlike the paper's Java rendering it
 * never keeps a second digit that repr would drop (5e-324, not Java's 4.9e-324).
 */
typedef unsigned __int128 u128;

#define POWER_LEAST (-292) /* the table holds g for 10^e, e = -k in [-292, 324] */
#define POWER_COUNT (324 - POWER_LEAST + 1)
#define LIMB_BITS 32
#define BIG_BITS 1120 /* 2^1120 / 10^292 still has the 126 bits needed, and 10^324 < 2^1120 */
#define BIG_LIMBS (BIG_BITS / LIMB_BITS + 1)

static u128 power_of_ten_above[POWER_COUNT]; /* floor(10^e / 2^r) + 1, r = floor(log2 10^e) - 125 */

static int floor_log10_pow2(int e) { return (int)(((int64_t)e * 661971961083LL) >> 41); }

static int floor_log10_three_quarters_pow2(int e) {
    return (int)(((int64_t)e * 661971961083LL - 274743187321LL) >> 41);
}

static int floor_log2_pow10(int e) { return (int)(((int64_t)e * 913124641741LL) >> 38); }

/* floor(big / 2^shift) for a value below 2^(shift + 128), big in 32-bit limbs, least first. */
static u128 big_shifted(const uint32_t *big, int shift) {
    u128 result = 0;
    for (int bit = shift + 127; bit >= shift; bit--)
        result = result << 1 | ((big[bit / LIMB_BITS] >> (bit % LIMB_BITS)) & 1);
    return result;
}

/* The table, exactly, from one big integer: 10^e by repeated multiplication for e >= 0,
   floor(2^1120 / 10^m) by repeated (floored, so exact) division for e = -m < 0. */
static void make_powers_of_ten(void) {
    uint32_t big[BIG_LIMBS + 1] = {1};
    for (int e = 0; e <= 324; e++) {
        int r = floor_log2_pow10(e) - 125;
        u128 top = r >= 0 ? big_shifted(big, r) : big_shifted(big, 0) << -r;
        power_of_ten_above[e - POWER_LEAST] = top + 1;
        uint64_t carry = 0;
        for (int i = 0; i < BIG_LIMBS; i++) {
            uint64_t product = (uint64_t)big[i] * 10 + carry;
            big[i] = (uint32_t)product;
            carry = product >> LIMB_BITS;
        }
    }
    memset(big, 0, sizeof big);
    big[BIG_BITS / LIMB_BITS] = 1u << (BIG_BITS % LIMB_BITS);
    for (int m = 1; m <= -POWER_LEAST; m++) {
        uint64_t remainder = 0;
        for (int i = BIG_LIMBS - 1; i >= 0; i--) {
            uint64_t dividend = remainder << LIMB_BITS | big[i];
            big[i] = (uint32_t)(dividend / 10);
            remainder = dividend % 10;
        }
        int r = floor_log2_pow10(-m) - 125; /* floor(2^-r / 10^m) = floor(big / 2^(1120 + r)) */
        power_of_ten_above[-m - POWER_LEAST] = big_shifted(big, BIG_BITS + r) + 1;
    }
}

/* g x / 2^127 rounded to odd (its integer part, the last bit set when a fraction is left), as
   section 9.8 computes it: g = g1 2^63 + g0 and the low 64 bits of g0 x dropped, which keeps
   the +1 of g out of products that are exact (a tie such as 1113178120592002.25 stays one). */
static inline uint64_t times_rounded_to_odd(u128 g, uint64_t x) {
    uint64_t g1 = (uint64_t)(g >> 63), g0 = (uint64_t)g & ((1ULL << 63) - 1);
    uint64_t x1 = (uint64_t)(((u128)g0 * x) >> 64);
    u128 y = (u128)g1 * x;
    uint64_t z = ((uint64_t)y >> 1) + x1;
    uint64_t integer = (uint64_t)(y >> 64) + (z >> 63);
    return integer | ((z & ((1ULL << 63) - 1)) != 0);
}

/* The shortest decimal d 10^exponent in the rounding interval of c 2^q (nearest to it on a tie
   of lengths, even on a tie of distances): d, which may end in zeros. */
static uint64_t shortest_decimal(uint64_t c, int q, int *exponent) {
    uint64_t even = !(c & 1), four_c = c << 2, upper = four_c + 2, lower;
    int k;
    if (c != 1ULL << 52 || q == -1074) {
        lower = four_c - 2;
        k = floor_log10_pow2(q);
    } else { /* a power of two: the gap below is half the gap above */
        lower = four_c - 1;
        k = floor_log10_three_quarters_pow2(q);
    }
    int shift = q + floor_log2_pow10(-k) + 2;
    u128 g = power_of_ten_above[-k - POWER_LEAST];
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

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                     "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                     "8081828384858687888990919293949596979899";

/* The decimal digits of n < 10^8 at `at`; their count (32-bit arithmetic, two digits a step). */
static int write_small_digits(char *at, uint32_t n) {
    int count = n < 10000 ? (n < 100 ? 1 + (n >= 10) : 3 + (n >= 1000))
                          : (n < 1000000 ? 5 + (n >= 100000) : 7 + (n >= 10000000));
    char *end = at + count;
    while (n >= 100) {
        end -= 2;
        memcpy(end, digit_pairs + 2 * (n % 100), 2);
        n /= 100;
    }
    if (n >= 10)
        memcpy(end - 2, digit_pairs + 2 * n, 2);
    else
        end[-1] = (char)('0' + n);
    return count;
}

/* Exactly eight digits of n < 10^8, leading zeros included. */
static void write_eight_digits(char *at, uint32_t n) {
    uint32_t high = n / 10000, low = n % 10000;
    memcpy(at, digit_pairs + 2 * (high / 100), 2);
    memcpy(at + 2, digit_pairs + 2 * (high % 100), 2);
    memcpy(at + 4, digit_pairs + 2 * (low / 100), 2);
    memcpy(at + 6, digit_pairs + 2 * (low % 100), 2);
}

/* The decimal digits of `number` at `at`; their count. */
static int write_digits(char *at, uint64_t number) {
    if (number < 100000000)
        return write_small_digits(at, (uint32_t)number);
    uint64_t high = number / 100000000;
    uint32_t low = (uint32_t)(number % 100000000);
    int count;
    if (high < 100000000) {
        count = write_small_digits(at, (uint32_t)high);
    } else {
        count = write_small_digits(at, (uint32_t)(high / 100000000));
        write_eight_digits(at + count, (uint32_t)(high % 100000000));
        count += 8;
    }
    write_eight_digits(at + count, low);
    return count + 8;
}

/* Write `number` times 10^exponent, trailing zeros dropped, laid out as repr: positional
   when the first digit's decimal exponent is -4 to 15 ("0.0001", "1234.5"),
   else "d.ddde+XX" with at least two exponent digits ("1e-05", "1.5e+16", "5e-324").
   The digits are moved by copies of a fixed COPY bytes, which the compiler makes a few
   moves: a copy of a variable length became `rep movsb`, whose start-up took 40 % of the
   printer's time (2.0x Ryu's d2s on the l2 values of grain, 1.0x with fixed copies).  So up
   to COPY + 8 bytes past `at` are written; the callers leave room for them. */
#define COPY 32
static size_t layout_decimal(char *at, int negative, uint64_t number, int exponent) {
    static const char leading_zeros[8] = {'0', '.', '0', '0', '0', '0', '0', '0'};
    while (number % 10 == 0) {
        number /= 10;
        exponent++;
    }
    char digits[24 + COPY];
    int count = write_digits(digits, number), point = exponent + count; /* 0.ddd times 10^point */
    char *start = at;
    if (negative)
        *at++ = '-';
    int scientific = point - 1;
    if (scientific < -4 || scientific >= 16) {
        *at++ = digits[0];
        if (count > 1) {
            *at++ = '.';
            memcpy(at, digits + 1, COPY);
            at += count - 1;
        }
        *at++ = 'e';
        *at++ = scientific < 0 ? '-' : '+';
        int magnitude = scientific < 0 ? -scientific : scientific;
        if (magnitude < 10)
            *at++ = '0';
        at += write_digits(at, (uint64_t)magnitude);
    } else if (point <= 0) {
        memcpy(at, leading_zeros, sizeof leading_zeros);
        at += 2 - point;
        memcpy(at, digits, COPY);
        at += count;
    } else if (point >= count) {
        memcpy(at, digits, COPY);
        at += count;
        memset(at, '0', (size_t)(point - count));
        at += point - count;
        memcpy(at, ".0", 2);
        at += 2;
    } else {
        memcpy(at, digits, COPY);
        at += point;
        *at++ = '.';
        memcpy(at, digits + point, COPY);
        at += count - point;
    }
    return (size_t)(at - start);
}

/* filterkit's text of a double: an integral value below 2^53 as an integer ("-0" for minus
   zero), NaN as "?", infinities as Java's "Infinity", anything else as Python's repr. */
static size_t format_number(char *at, double value) {
    if (value != value) {
        *at = '?';
        return 1;
    }
    if (isinf(value))
        return (size_t)sprintf(at, value > 0 ? "Infinity" : "-Infinity");
    if (fabs(value) < 9007199254740992.0 && value == (double)(int64_t)value) {
        if (value == 0 && signbit(value)) {
            memcpy(at, "-0", 2);
            return 2;
        }
        int64_t whole = (int64_t)value;
        if (whole < 0) {
            *at = '-';
            return 1 + (size_t)write_digits(at + 1, (uint64_t)(-whole));
        }
        return (size_t)write_digits(at, (uint64_t)whole);
    }
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    uint64_t fraction = bits & ((1ULL << 52) - 1);
    int biased = (int)((bits >> 52) & 0x7ff);
    uint64_t c = biased ? fraction | 1ULL << 52 : fraction;
    int q = (biased ? biased : 1) - 1075, exponent;
    uint64_t decimal = shortest_decimal(c, q, &exponent);
    return layout_decimal(at, (int)(bits >> 63), decimal, exponent);
}

/* `floor print`: each line of stdin a double's bit pattern in hex, each line out its text
   (the self-test of the printer; tests/test_benchmark_floor.py compares it with repr). */
static int print_bit_patterns(void) {
    char line[64], text[64 + COPY];
    while (fgets(line, sizeof line, stdin)) {
        uint64_t bits = strtoull(line, NULL, 16);
        double value;
        memcpy(&value, &bits, sizeof value);
        size_t length = format_number(text, value);
        text[length++] = '\n';
        put(text, length);
    }
    flush_out();
    return 0;
}

/* ---- the inverse normal CDF, for bi-normal separation ------------------------------ */

static double inverse_normal(double p) {
    /* Acklam's rational approximation, refined by one Halley step on erfc. */
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                               1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01,  -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    double x;
    if (p < 0.02425) {
        double q = sqrt(-2 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else if (p > 1 - 0.02425) {
        double q = sqrt(-2 * log(1 - p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else {
        double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    double e = 0.5 * erfc(-x / sqrt(2)) - p;
    double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}

/* ---- the input ----------------------------------------------------------------------- */

struct input {
    const char *text, *end;
    const char *data; /* the first byte after the @data line */
    size_t data_line;
    int n_attributes;
    unsigned char *nominal; /* per attribute */
    char **first_label;     /* per nominal attribute: its first label (the sparse 0) */
};

static const char *line_end(const char *at, const char *end) {
    const char *newline = memchr(at, '\n', (size_t)(end - at));
    return newline ? newline : end;
}

static int starts_with_word(const char *at, const char *end, const char *word) {
    size_t length = strlen(word);
    return (size_t)(end - at) >= length && strncasecmp(at, word, length) == 0;
}

static void read_header(struct input *in) {
    const char *at = in->text;
    size_t line = 0, capacity = 1024;
    in->nominal = malloc(capacity);
    in->first_label = malloc(capacity * sizeof(char *));
    while (at < in->end) {
        const char *stop = line_end(at, in->end);
        line++;
        const char *word = at;
        while (word < stop && (*word == ' ' || *word == '\t'))
            word++;
        if (starts_with_word(word, stop, "@data")) {
            in->data = stop < in->end ? stop + 1 : stop;
            in->data_line = line;
            put(in->text, (size_t)(in->data - in->text));
            return;
        }
        if (starts_with_word(word, stop, "@attribute")) {
            const char *name = word + 10;
            while (name < stop && (*name == ' ' || *name == '\t'))
                name++;
            const char *type = name;
            if (*type == '\'' || *type == '"') {
                char quote = *type++;
                while (type < stop && *type != quote)
                    type += *type == '\\' ? 2 : 1;
                type++;
            } else {
                while (type < stop && *type != ' ' && *type != '\t')
                    type++;
            }
            while (type < stop && (*type == ' ' || *type == '\t'))
                type++;
            if ((size_t)in->n_attributes == capacity) {
                capacity *= 2;
                in->nominal = realloc(in->nominal, capacity);
                in->first_label = realloc(in->first_label, capacity * sizeof(char *));
            }
            int nominal = type < stop && *type == '{';
            in->nominal[in->n_attributes] = (unsigned char)nominal;
            in->first_label[in->n_attributes] = NULL;
            if (nominal) {
                const char *label = type + 1, *label_end = label;
                while (label_end < stop && *label_end != ',' && *label_end != '}')
                    label_end++;
                in->first_label[in->n_attributes] = strndup(label, (size_t)(label_end - label));
            } else if (!starts_with_word(type, stop, "numeric") && !starts_with_word(type, stop, "real") &&
                       !starts_with_word(type, stop, "integer")) {
                refuse("an attribute that is neither numeric nor nominal", line);
            }
            in->n_attributes++;
        }
        at = stop + 1;
    }
    refuse("no @data line", line);
}

struct entry {
    int index;
    double value;         /* numeric attributes */
    const char *token;    /* nominal attributes: the label as written */
    int token_length;
};

/* Parse one sparse row at `at`; returns the number of entries and moves `at` past the line. */
static int parse_row(const struct input *in, const char **at, size_t line, struct entry **entries, int *capacity) {
    const char *p = *at, *stop = line_end(p, in->end);
    *at = stop < in->end ? stop + 1 : stop;
    while (p < stop && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    if (p == stop || *p == '%')
        return -1;
    if (*p != '{')
        refuse("a dense row", line);
    p++;
    int count = 0;
    while (p < stop && *p != '}') {
        if (count == *capacity) {
            *capacity *= 2;
            *entries = realloc(*entries, (size_t)*capacity * sizeof **entries);
        }
        struct entry *e = &(*entries)[count];
        int index = 0;
        if (*p < '0' || *p > '9')
            refuse("a bad sparse index", line);
        while (*p >= '0' && *p <= '9')
            index = index * 10 + (*p++ - '0');
        if (index >= in->n_attributes || *p != ' ')
            refuse("a bad sparse entry", line);
        p++;
        const char *token = p;
        while (p < stop && *p != ',' && *p != '}')
            p++;
        e->index = index;
        e->token = token;
        e->token_length = (int)(p - token);
        if (in->nominal[index]) {
            if (*token == '\'' || *token == '"' || *token == '?')
                refuse("a quoted or missing label", line);
        } else {
            const char *digit = token;
            uint64_t whole = 0;
            while (digit < p && *digit >= '0' && *digit <= '9' && digit - token < 18)
                whole = whole * 10 + (uint64_t)(*digit++ - '0');
            if (digit == p && digit > token) {
                e->value = (double)whole;
            } else {
                char *parsed;
                e->value = strtod(token, &parsed);
                if (parsed != p || !isfinite(e->value))
                    refuse("a number the floor does not read", line);
            }
        }
        count++;
        if (*p == ',')
            p++;
    }
    if (p == stop)
        refuse("an unterminated sparse row", line);
    return count;
}

static void write_row(const struct input *in, const struct entry *entries, int count, const double *values) {
    if (out_used + 2 > OUT_SIZE)
        flush_out();
    out[out_used++] = '{';
    int written = 0;
    for (int i = 0; i < count; i++) {
        const struct entry *e = &entries[i];
        if (!in->nominal[e->index] && values[i] == 0)
            continue; /* a zero is not stored in a sparse row */
        if (out_used + 600 > OUT_SIZE)
            flush_out();
        if (written++)
            out[out_used++] = ',';
        char *at = out + out_used;
        at += write_digits(at, (uint64_t)e->index);
        *at++ = ' ';
        if (in->nominal[e->index]) {
            if (e->token_length > 500)
                refuse("a label longer than the floor's buffer", 0);
            memcpy(at, e->token, (size_t)e->token_length);
            at += e->token_length;
        } else {
            at += format_number(at, values[i]);
        }
        out_used = (size_t)(at - out);
    }
    if (out_used + 2 > OUT_SIZE)
        flush_out();
    out[out_used++] = '}';
    out[out_used++] = '\n';
}

/* Divide the row's numeric features by their Euclidean length: the squares summed in
   entry order, as filterkit does; a row whose squares overflow or fall below 2^-968 is
   first scaled by a power of two near its largest value (exact), as filterkit does. */
static void normalize(const struct input *in, const struct entry *entries, int count, double *values, int class_index) {
    double sum = 0, largest = 0;
    for (int i = 0; i < count; i++)
        if (!in->nominal[entries[i].index] && entries[i].index != class_index) {
            sum += values[i] * values[i];
            largest = fmax(largest, fabs(values[i]));
        }
    double norm = sqrt(sum);
    if (largest > 0 && (!isfinite(norm) || largest * largest < 0x1p-968)) {
        int exponent;
        frexp(largest, &exponent);
        sum = 0;
        for (int i = 0; i < count; i++)
            if (!in->nominal[entries[i].index] && entries[i].index != class_index) {
                values[i] = ldexp(values[i], -exponent);
                sum += values[i] * values[i];
            }
        norm = sqrt(sum);
    }
    if (norm > 0)
        for (int i = 0; i < count; i++)
            if (!in->nominal[entries[i].index] && entries[i].index != class_index)
                values[i] = values[i] / norm;
}

/* The class label of a row: its class entry's token, or the first label when absent. */
static int is_positive(const struct input *in, const struct entry *entries, int count, int class_index,
                       const char *positive) {
    for (int i = 0; i < count; i++)
        if (entries[i].index == class_index)
            return (size_t)entries[i].token_length == strlen(positive) &&
                   strncmp(entries[i].token, positive, (size_t)entries[i].token_length) == 0;
    return strcmp(in->first_label[class_index], positive) == 0;
}

int main(int argc, char **argv) {
    enum job job;
    const char *class_option = "last", *path = NULL;
    make_powers_of_ten();
    if (argc == 2 && strcmp(argv[1], "print") == 0)
        return print_bit_patterns();
    if (argc < 3)
        goto usage;
    if (strcmp(argv[1], "identity") == 0)
        job = IDENTITY;
    else if (strcmp(argv[1], "l2") == 0)
        job = L2;
    else if (strcmp(argv[1], "shape") == 0)
        job = SHAPE;
    else
        goto usage;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
            class_option = argv[++i];
        else if (!path)
            path = argv[i];
        else
            goto usage;
    }
    if (!path)
        goto usage;
    int descriptor = open(path, O_RDONLY);
    struct stat status;
    if (descriptor < 0 || fstat(descriptor, &status) < 0) {
        perror(path);
        return 1;
    }
    struct input in = {0};
    in.text = status.st_size ? mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_PRIVATE, descriptor, 0) : "";
    if (in.text == MAP_FAILED) {
        perror(path);
        return 1;
    }
    madvise((void *)in.text, (size_t)status.st_size, MADV_SEQUENTIAL);
    in.end = in.text + status.st_size;
    read_header(&in);
    int class_index = strcmp(class_option, "first") == 0  ? 0
                      : strcmp(class_option, "last") == 0 ? in.n_attributes - 1
                                                          : atoi(class_option) - 1;
    if (class_index < 0 || class_index >= in.n_attributes)
        refuse("no such class attribute", 0);
    int capacity = 1024;
    struct entry *entries = malloc((size_t)capacity * sizeof *entries);
    double *values = malloc((size_t)capacity * sizeof *values);
    int values_capacity = capacity;
    double *shaped = NULL;
    if (job == SHAPE) {
        if (!in.nominal[class_index])
            refuse("shape needs a nominal class", 0);
        /* pass 1: per feature and count value, the rows and positives */
        const char *positive = "1";
        size_t cells = (size_t)in.n_attributes * (MAX_COUNT + 1);
        double *rows_at = calloc(cells, sizeof *rows_at), *positives_at = calloc(cells, sizeof *positives_at);
        double total = 0, total_positive = 0;
        const char *at = in.data;
        size_t line = in.data_line;
        while (at < in.end) {
            int count = parse_row(&in, &at, ++line, &entries, &capacity);
            if (count < 0)
                continue;
            int positive_row = is_positive(&in, entries, count, class_index, positive);
            total++;
            total_positive += positive_row;
            for (int i = 0; i < count; i++) {
                if (in.nominal[entries[i].index])
                    continue;
                double v = entries[i].value;
                int bin = v >= MAX_COUNT ? MAX_COUNT : v <= 0 ? 0 : (int)v;
                size_t cell = (size_t)entries[i].index * (MAX_COUNT + 1) + (size_t)bin;
                rows_at[cell]++;
                positives_at[cell] += positive_row;
            }
        }
        /* the map: per feature and count, (Laplace estimate - the one at 0) * BNS */
        shaped = malloc(cells * sizeof *shaped);
        double negatives = total - total_positive;
        for (int f = 0; f < in.n_attributes; f++) {
            double *row = rows_at + (size_t)f * (MAX_COUNT + 1), *pos = positives_at + (size_t)f * (MAX_COUNT + 1);
            double present = 0, present_positive = 0;
            for (int v = 1; v <= MAX_COUNT; v++) {
                present += row[v];
                present_positive += pos[v];
            }
            double tpr = total_positive > 0 ? present_positive / total_positive : 0;
            double fpr = negatives > 0 ? (present - present_positive) / negatives : 0;
            tpr = fmin(fmax(tpr, 0.0005), 0.9995);
            fpr = fmin(fmax(fpr, 0.0005), 0.9995);
            double bns = fabs(inverse_normal(tpr) - inverse_normal(fpr));
            double zero_rows = total - present, zero_positive = total_positive - present_positive;
            double at_zero = (zero_positive + 1) / (zero_rows + 2);
            for (int v = 0; v <= MAX_COUNT; v++)
                shaped[(size_t)f * (MAX_COUNT + 1) + (size_t)v] =
                    v == 0 ? 0 : ((pos[v] + 1) / (row[v] + 2) - at_zero) * bns;
        }
        free(rows_at);
        free(positives_at);
    }
    const char *at = in.data;
    size_t line = in.data_line;
    while (at < in.end) {
        int count = parse_row(&in, &at, ++line, &entries, &capacity);
        if (count < 0)
            continue;
        if (count > values_capacity) {
            values_capacity = capacity;
            values = realloc(values, (size_t)values_capacity * sizeof *values);
        }
        for (int i = 0; i < count; i++)
            values[i] = entries[i].value;
        if (job == SHAPE) {
            for (int i = 0; i < count; i++) {
                if (in.nominal[entries[i].index])
                    continue;
                double v = values[i];
                int bin = v >= MAX_COUNT ? MAX_COUNT : v <= 0 ? 0 : (int)v;
                values[i] = shaped[(size_t)entries[i].index * (MAX_COUNT + 1) + (size_t)bin];
            }
        }
        if (job != IDENTITY)
            normalize(&in, entries, count, values, class_index);
        write_row(&in, entries, count, values);
    }
    flush_out();
    return 0;
usage:
    fprintf(stderr, "usage: floor identity|l2|shape [-c first|last|N] IN.arff > OUT.arff\n"
                    "       floor print < BIT_PATTERNS > TEXTS\n");
    return 2;
}
