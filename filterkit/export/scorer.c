/*
 * The scorer of one filterkit model, written by `filterkit export MODEL --c OUT.c` (docs/serving.md): a document's
 * UTF-8 bytes in, the classifier's decision values and its answer out, as `filterkit predict` gives them, bit for
 * bit.  Plain C99 and the C library; nothing from the model is code here: its words and labels are byte arrays,
 * its numbers hexadecimal floating-point literals.
 *
 *   cc -O2 -ffp-contract=off -o scorer OUT.c -lm
 *   ./scorer < documents.txt          one document a line: its answer, a tab, its decision values
 *   ./scorer -0 < documents           documents ended by NUL bytes (a document may hold line breaks)
 *
 * No fused multiply-add (gcc and clang are told so below; give another compiler its option): it rounds once where
 * numpy's operations, which this file repeats one by one, round twice.  From another language, call decide() (and
 * answer(), probabilities()) through its C foreign-function interface; define FILTERKIT_NO_MAIN to leave out main.
 */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* @TOKENS@ */

/* A document's features after each step: columns ascending, each once, and their values. */
typedef struct {
    int64_t *column;
    double *value;
    size_t n, allocated;
} scorer_vector;

/* Which columns a step acts on: position = column - first for first <= column < first + count, unless a table
 * gives each column's position (-1: none). */
typedef struct {
    int64_t first, count;
    const int32_t *table;
    int64_t table_size;
} scorer_positions;

static int64_t
scorer_position(const scorer_positions *p, int64_t column)
{
    if (p->table != NULL)
        return column < p->table_size ? p->table[column] : -1;
    return column >= p->first && column < p->first + p->count ? column - p->first : -1;
}

static int
scorer_reserve(scorer_vector *v, size_t n)
{
    if (n <= v->allocated)
        return 1;
    size_t size = v->allocated ? v->allocated : 64;
    while (size < n)
        size *= 2;
    int64_t *column = realloc(v->column, size * sizeof(int64_t));
    if (column == NULL)
        return 0;
    v->column = column;
    double *value = realloc(v->value, size * sizeof(double));
    if (value == NULL)
        return 0;
    v->value = value;
    v->allocated = size;
    return 1;
}

#if SCORER_DOCUMENTS
/* The words step's values (plugins/words.py, _weighted): the count, or 1 for presence; ln(1 + x) with --log-tf
 * (numpy's logarithm, from a table of the whole counts the model's export computed, libm's past it); times the
 * word's idf with --idf.  The word's column follows the attributes the stage keeps. */
typedef struct {
    int64_t first_column;
    int counts, log_tf;
    const double *log_table; /* log_table[c] = ln(1 + c) as numpy computes it */
    int64_t log_table_size;
    const double *idf; /* NULL: no --idf */
} scorer_words;

static void
scorer_weigh_words(scorer_vector *v, const WordPair *pairs, size_t n, const scorer_words *w)
{
    for (size_t i = 0; i < n; i++) {
        double x = w->counts ? (double)pairs[i].count : 1.0;
        if (w->log_tf) {
            int64_t whole = (int64_t)x;
            x = whole < w->log_table_size ? w->log_table[whole] : log(x + 1.0);
        }
        if (w->idf != NULL)
            x = x * w->idf[pairs[i].column];
        v->column[i] = w->first_column + pairs[i].column;
        v->value[i] = x;
    }
    v->n = n;
}
#endif

/* The fitted shaper (plugins/shaper.py; the compiled kernel shape_stored in _kernels.c, whose operations these are):
 * each acted column's value placed among its knots and interpolated to its class probability, less the shift that
 * keeps 0 at 0. */
typedef struct {
    scorer_positions acted;
    const int64_t *knot_start; /* per position, its knots: knot_start[p] to knot_start[p + 1] */
    const double *knot_value, *knot_probability, *first_probability, *zero_probability, *default_probability,
        *zero_shift;
    const unsigned char *nominal;
    int zero_bin;
    const double *missing_probability; /* a missing value's probability where missing_bin, else it stays missing */
    int missing_bin;
} scorer_shape;

#if SCORER_USES_SHAPE || SCORER_USES_COPIES
/* A missing value (NaN) shaped: its bin's probability less the shift, or still missing. */
static double
scorer_shaped_missing(const scorer_shape *s, int64_t p)
{
    return s->missing_bin ? s->missing_probability[p] - s->zero_shift[p] : NAN;
}
#endif

#if SCORER_USES_SHAPE || SCORER_USES_COPIES
static double
scorer_shaped(const scorer_shape *s, int64_t p, double v)
{
    const double *value = s->knot_value + s->knot_start[p], *probability = s->knot_probability + s->knot_start[p];
    int64_t n = s->knot_start[p + 1] - s->knot_start[p], below = -1;
    int64_t low = 0, high = n; /* the last knot at most v: numpy's searchsorted(side="right") - 1 */
    while (low < high) {
        int64_t middle = low + (high - low) / 2;
        if (value[middle] <= v)
            low = middle + 1;
        else
            high = middle;
    }
    below = low - 1;
    double shaped;
    if (below < 0) {
        shaped = s->first_probability[p];
    } else {
        shaped = probability[below];
        if (value[below] != v && below + 1 < n) {
            double slope = (probability[below + 1] - probability[below]) / (value[below + 1] - value[below]);
            shaped = slope * (v - value[below]) + probability[below];
        }
    }
    if (s->zero_bin && v == 0)
        shaped = s->zero_probability[p];
    if (s->nominal[p])
        shaped = below >= 0 && value[below] == v ? probability[below] : s->default_probability[p];
    return shaped - s->zero_shift[p];
}
#endif

#if SCORER_USES_SHAPE
static void
scorer_shape_values(scorer_vector *v, const scorer_shape *s)
{
    for (size_t i = 0; i < v->n; i++) {
        int64_t p = scorer_position(&s->acted, v->column[i]);
        if (p >= 0)
            v->value[i] = isnan(v->value[i]) ? scorer_shaped_missing(s, p) : scorer_shaped(s, p, v->value[i]);
    }
}
#endif

/* One-vs-rest shaping on several classes or labels (plugins/shaper.py, Shaper._transform_copies): each input
 * column's value copied to each of its output columns (n_outputs[c] of them from first_output[c]), each shaped by
 * that column's knots (output_table[o]; -1: copied as it is).  Returns 0 when out of memory. */
typedef struct {
    const scorer_shape *shape;
    const int64_t *first_output, *n_outputs;
    int64_t n_inputs;
    const int32_t *output_table;
} scorer_copies;

#if SCORER_USES_COPIES
static int
scorer_shape_copies(scorer_vector *v, const scorer_copies *c)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++)
        n += v->column[i] < c->n_inputs ? (size_t)c->n_outputs[v->column[i]] : 0;
    scorer_vector copies = {NULL, NULL, 0, 0};
    if (!scorer_reserve(&copies, n + 1)) {
        free(copies.column);
        free(copies.value);
        return 0;
    }
    for (size_t i = 0; i < v->n; i++) {
        int64_t column = v->column[i];
        double x = v->value[i];
        for (int64_t k = 0; column < c->n_inputs && k < c->n_outputs[column]; k++) {
            int64_t output = c->first_output[column] + k;
            int32_t table = c->output_table[output];
            copies.column[copies.n] = output;
            copies.value[copies.n++] = table < 0 ? x
                                       : isnan(x) ? scorer_shaped_missing(c->shape, table)
                                                  : scorer_shaped(c->shape, table, x);
        }
    }
    free(v->column);
    free(v->value);
    *v = copies;
    return 1;
}
#endif

/* A per-feature factor (a scorer's scaling, plugins/scorers.py; filterkit.stage._Factors and scale_values): x · factor,
 * or through powers of two where a training range is beyond the safe doubles. */
typedef struct {
    scorer_positions acted;
    const double *factor;
    const int32_t *inner, *outer; /* NULL: no powers of two; else ldexp(ldexp(x, inner) · factor, outer) */
} scorer_scale;

#if SCORER_USES_SCALE
static void
scorer_scale_values(scorer_vector *v, const scorer_scale *s)
{
    for (size_t i = 0; i < v->n; i++) {
        int64_t p = scorer_position(&s->acted, v->column[i]);
        if (p >= 0 && s->inner == NULL)
            v->value[i] = v->value[i] * s->factor[p];
        else if (p >= 0)
            v->value[i] = ldexp(ldexp(v->value[i], s->inner[p]) * s->factor[p], s->outer[p]);
    }
}
#endif

#if SCORER_USES_PRESENCE
/* binarize (plugins/normalizers.py): 1 where the value is not 0, missing stays missing. */
static void
scorer_presence(scorer_vector *v, const scorer_positions *acted)
{
    for (size_t i = 0; i < v->n; i++)
        if (scorer_position(acted, v->column[i]) >= 0 && !isnan(v->value[i]))
            v->value[i] = v->value[i] != 0 ? 1.0 : 0.0;
}
#endif

/* Columns kept and renumbered (select; the classifier's numeric features): each column's new number, -1 if left
 * out.  The numbers rise with the columns, so the order stays ascending. */
static void
scorer_renumber(scorer_vector *v, const scorer_positions *kept)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++) {
        int64_t column = scorer_position(kept, v->column[i]);
        if (column >= 0) {
            v->column[n] = column;
            v->value[n++] = v->value[i];
        }
    }
    v->n = n;
}

/* l2 and l1 (plugins/normalizers.py; the compiled kernel normalize_stored): the acted values divided by their
 * norm, summed in column order; a row whose plain norm would overflow, or whose largest power falls below 2^-968,
 * scaled first by the power of two that brings its largest value into [0.5, 1). */
#if SCORER_USES_NORMALIZE
static void
scorer_normalize(scorer_vector *v, const scorer_positions *acted, int order)
{
    double sum = 0.0, largest = 0.0;
    for (size_t i = 0; i < v->n; i++) {
        if (scorer_position(acted, v->column[i]) < 0 || isnan(v->value[i]))
            continue;
        double magnitude = fabs(v->value[i]);
        sum += order == 2 ? magnitude * magnitude : magnitude;
        if (magnitude > largest)
            largest = magnitude;
    }
    double norm = order == 2 ? sqrt(sum) : sum;
    double largest_power = order == 2 ? largest * largest : largest;
    if (largest > 0 && (!isfinite(norm) || largest_power < ldexp(1.0, -968))) {
        int exponent = 0;
        if (isfinite(largest))
            frexp(largest, &exponent);
        sum = 0.0;
        for (size_t i = 0; i < v->n; i++) {
            if (scorer_position(acted, v->column[i]) < 0)
                continue;
            double x = v->value[i];
            double y = isfinite(largest) ? ldexp(x, -exponent) : isinf(x) ? copysign(1.0, x) : isnan(x) ? NAN : 0.0;
            v->value[i] = y;
            if (!isnan(x))
                sum += order == 2 ? y * y : fabs(y);
        }
        norm = order == 2 ? sqrt(sum) : sum;
    }
    double divisor = norm > 0 ? norm : 1.0;
    for (size_t i = 0; i < v->n; i++)
        if (scorer_position(acted, v->column[i]) >= 0)
            v->value[i] = v->value[i] / divisor;
}
#endif

/* The model's data and its steps, generated from the model file. */
/* @MODEL@ */

/* Each output's decision value w·x + b of the features in v (which it frees): the steps, then the features summed in
 * column order from 0, as scipy's sparse product sums them, then b added (NaN for a label every training row held or
 * none did).  Returns 0, -2 when out of memory, or -3 when a value passes a double's range (predict refuses the row:
 * a hand-edited model's weights, or values far from the training data's). */
static int
scorer_decide(scorer_vector *v, double *out)
{
    if (!scorer_steps(v)) {
        free(v->column);
        free(v->value);
        return -2;
    }
    for (int k = 0; k < SCORER_OUTPUTS; k++)
        out[k] = 0.0;
    for (size_t i = 0; i < v->n; i++) {
        double x = isnan(v->value[i]) ? 0.0 : v->value[i];
        if (x == 0.0)
            continue;
        const double *weights = SCORER_WEIGHTS + (size_t)v->column[i] * SCORER_OUTPUTS;
        for (int k = 0; k < SCORER_OUTPUTS; k++)
            out[k] += x * weights[k];
    }
    int unbounded = 0;
    for (int k = 0; k < SCORER_OUTPUTS; k++) {
        out[k] = SCORER_CONSTANT[k] >= 0 ? NAN : out[k] + SCORER_INTERCEPTS[k];
        unbounded |= SCORER_CONSTANT[k] < 0 && !isfinite(out[k]);
    }
    free(v->column);
    free(v->value);
    return unbounded ? -3 : 0;
}

#if SCORER_DOCUMENTS
/* Each output's decision value w·x + b of the document utf8[0:n] (one output for a two-class model, one a class or a
 * label otherwise).  Returns 0; -1 when the bytes are not UTF-8, -2 when out of memory, -3 when a decision value
 * passes a double's range.  Thread-safe. */
int
decide(const char *utf8, size_t n, double *out)
{
    WordPair *pairs = NULL;
    size_t pairs_allocated = 0;
    long counted = words_count((const unsigned char *)utf8, n, &pairs, &pairs_allocated);
    if (counted < 0) {
        free(pairs);
        return (int)counted;
    }
    scorer_vector v = {NULL, NULL, 0, 0};
    if (!scorer_reserve(&v, (size_t)counted + 1)) {
        free(pairs);
        free(v.column);
        free(v.value);
        return -2;
    }
    scorer_weigh_words(&v, pairs, (size_t)counted, &SCORER_WORDS);
    free(pairs);
    return scorer_decide(&v, out);
}
#else
/* Each output's decision value w·x + b of a row given by its non-zero values: values[i] of input attribute
 * columns[i] (0-based positions in the model's input header, ascending, none the class or a label; NaN: missing).
 * Returns 0; -1 for a column out of order, out of range or the class; -2 when out of memory; -3 when a decision
 * value passes a double's range.  Thread-safe. */
int
decide_values(const int64_t *columns, const double *values, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++)
        if (columns[i] < 0 || columns[i] >= SCORER_INPUTS || SCORER_TARGET[columns[i]] ||
            (i > 0 && columns[i] <= columns[i - 1]))
            return -1;
    scorer_vector v = {NULL, NULL, 0, 0};
    if (!scorer_reserve(&v, n + 1)) {
        free(v.column);
        free(v.value);
        return -2;
    }
    memcpy(v.column, columns, n * sizeof(int64_t));
    memcpy(v.value, values, n * sizeof(double));
    v.n = n;
    return scorer_decide(&v, out);
}
#endif

/* Each output's Platt probability 1 / (1 + exp(A·f + B)) of its decision value f (NaN for a constant label, or for
 * a label too rare for a sigmoid, decided by its margin); 0, or -1 for a model fitted without any sigmoid.  Its exp
 * is the C library's, which may differ from numpy's in the last bit. */
int
probabilities(const double *decisions, double *out)
{
    if (!SCORER_ANY_SIGMOID)
        return -1;
    for (int k = 0; k < SCORER_OUTPUTS; k++)
        out[k] = SCORER_SIGMOID_OF[k]
                     ? 1.0 / (1.0 + exp(SCORER_SIGMOIDS[2 * k] * decisions[k] + SCORER_SIGMOIDS[2 * k + 1]))
                     : NAN;
    return 0;
}

/* Whether output k says yes (a two-class model's positive class, a label): its score (the probability, or the
 * decision value without a sigmoid) at or above the threshold the fit chose, else a probability of at least 0.5 or
 * a positive decision value (each label by its own rule); a constant label is what it was in training. */
static int
scorer_says_yes(int k, double decision)
{
    if (SCORER_CONSTANT[k] >= 0)
        return SCORER_CONSTANT[k];
    double score = decision;
    if (SCORER_SIGMOID_OF[k])
        score = 1.0 / (1.0 + exp(SCORER_SIGMOIDS[2 * k] * decision + SCORER_SIGMOIDS[2 * k + 1]));
    if (SCORER_THRESHOLD_OF[k])
        return score >= SCORER_THRESHOLDS[k];
    return SCORER_SIGMOID_OF[k] ? score >= 0.5 : score > 0;
}

/* The model's answer from decide()'s values: for a two-class model 0 (the positive class) or 1 (the other), for
 * k classes the class of the largest score (less its offset where the fit chose offsets; the first on a tie); for
 * label sets, chosen[k] = 1 for each label predicted, and the count of them.  answer_name() names it. */
int
answer(const double *decisions, unsigned char *chosen)
{
    if (SCORER_TASK == 0)
        return scorer_says_yes(0, decisions[0]) ? 0 : 1;
    if (SCORER_TASK == 2) {
        int count = 0;
        for (int k = 0; k < SCORER_OUTPUTS; k++)
            count += chosen[k] = (unsigned char)scorer_says_yes(k, decisions[k]);
        return count;
    }
    int best = 0;
    double best_score = 0.0;
    for (int k = 0; k < SCORER_OUTPUTS; k++) {
        double score = decisions[k];
        if (SCORER_HAS_SIGMOIDS)
            score = 1.0 / (1.0 + exp(SCORER_SIGMOIDS[2 * k] * decisions[k] + SCORER_SIGMOIDS[2 * k + 1]));
        if (SCORER_HAS_THRESHOLDS)
            score = score - SCORER_THRESHOLDS[k];
        if (isnan(score)) /* numpy's argmax takes the first NaN */
            return k;
        if (k == 0 || score > best_score) {
            best = k;
            best_score = score;
        }
    }
    return best;
}

/* The name of answer k (UTF-8, not NUL-terminated: *size bytes): a class, a label, or a two-class model's 0
 * (positive) and 1 (the other class, or "not POSITIVE"); NULL (size 0) for a k that names none. */
const char *
answer_name(int k, size_t *size)
{
    *size = 0;
    if (k < 0 || k >= (SCORER_TASK == 0 ? 2 : SCORER_OUTPUTS))
        return NULL;
    *size = (size_t)(SCORER_NAME_START[k + 1] - SCORER_NAME_START[k]);
    return (const char *)SCORER_NAMES + SCORER_NAME_START[k];
}

#ifndef FILTERKIT_NO_MAIN
#if SCORER_DOCUMENTS
#define SCORER_INPUT "one document a line"
#define SCORER_REFUSED "not UTF-8"

static int
scorer_decide_line(const char *line, size_t n, double *decisions)
{
    return decide(line, n, decisions);
}
#else
#define SCORER_INPUT "one row a line, as INDEX:VALUE pairs"
#define SCORER_REFUSED "not INDEX:VALUE pairs of the model's attributes (1-based, ascending, not the class)"

/* A row written as svmlight writes one's values: INDEX:VALUE pairs separated by spaces or tabs, each INDEX an
 * attribute's 1-based position in the model's input header, each VALUE a number or ? (missing); the decision
 * values of decide_values.  -1 for a line that is not such pairs. */
/* Whether [from, to) is written in decimal digits, signs, a point and exponents only. */
static int
scorer_decimal(const char *from, const char *to)
{
    for (; from < to; from++)
        if (strchr("0123456789+-.eE", *from) == NULL)
            return 0;
    return 1;
}

static int
scorer_decide_line(const char *line, size_t n, double *decisions)
{
    char *text = malloc(n + 1);
    int64_t *columns = malloc((n / 2 + 1) * sizeof(int64_t));
    double *values = malloc((n / 2 + 1) * sizeof(double));
    int code = text == NULL || columns == NULL || values == NULL ? -2 : 0;
    size_t count = 0;
    if (code == 0) {
        memcpy(text, line, n);
        text[n] = '\0';
        code = strlen(text) == n ? 0 : -1;
    }
    for (char *at = text; code == 0;) {
        while (*at == ' ' || *at == '\t' || *at == '\r')
            at++;
        if (*at == '\0')
            break;
        char *end;
        long long index = strtoll(at, &end, 10);
        if (end == at || *end != ':' || index < 1 || index > SCORER_INPUTS) {
            code = -1;
            break;
        }
        at = end + 1;
        double value = strtod(at, &end);
        if (end == at && *at == '?') {
            value = NAN;
            end = at + 1;
        } else if (!scorer_decimal(at, end) || !isfinite(value)) {
            code = -1; /* strtod's nan, inf, hexadecimal or a number past the doubles: not a value predict reads */
            break;
        }
        if (end == at || (*end != '\0' && *end != ' ' && *end != '\t' && *end != '\r')) {
            code = -1;
            break;
        }
        columns[count] = (int64_t)index - 1;
        values[count++] = value;
        at = end;
    }
    if (code == 0)
        code = decide_values(columns, values, count, decisions);
    free(text);
    free(columns);
    free(values);
    return code;
}
#endif

static int
scorer_write_answer(const char *line, size_t n)
{
    double decisions[SCORER_OUTPUTS];
    unsigned char chosen[SCORER_OUTPUTS];
    int code = scorer_decide_line(line, n, decisions);
    if (code != 0)
        return code;
    int given = answer(decisions, chosen);
    size_t size;
    if (SCORER_TASK == 2) {
        int written = 0;
        for (int k = 0; k < SCORER_OUTPUTS; k++) {
            if (!chosen[k])
                continue;
            const char *name = answer_name(k, &size);
            if (written++)
                fputc(',', stdout);
            fwrite(name, 1, size, stdout);
        }
    } else {
        const char *name = answer_name(given, &size);
        fwrite(name, 1, size, stdout);
    }
    for (int k = 0; k < SCORER_OUTPUTS; k++)
        printf("\t%.17g", decisions[k]);
    fputc('\n', stdout);
    return 0;
}

/* Score each document (or row) of standard input: one a line (its line break not part of it), or with -0 each
 * ended by a NUL byte.  One that cannot be read is an error naming its number; the exit status is then 1. */
int
main(int argc, char **argv)
{
    int separator = argc > 1 && strcmp(argv[1], "-0") == 0 ? '\0' : '\n';
    if (argc > 2 || (argc == 2 && separator == '\n')) {
        fprintf(stderr, "usage: %s [-0] < input (%s)\n", argv[0], SCORER_INPUT);
        return 2;
    }
    size_t allocated = 1 << 16, n = 0;
    char *document = malloc(allocated);
    long number = 0;
    int c, failed = 0;
    while (document != NULL) {
        c = getchar();
        if (c != EOF && c != separator) {
            if (n == allocated) {
                char *larger = realloc(document, allocated *= 2);
                if (larger == NULL)
                    break;
                document = larger;
            }
            document[n++] = (char)c;
            continue;
        }
        if (c == EOF && n == 0)
            break;
        number++;
        int code = scorer_write_answer(document, n);
        if (code != 0) {
            fprintf(stderr, "%s %ld: %s\n", SCORER_DOCUMENTS ? "document" : "row", number,
                    code == -1   ? SCORER_REFUSED
                    : code == -3 ? "its decision value is not a finite number (it passes a double's range)"
                                 : "out of memory");
            failed = 1;
            break;
        }
        n = 0;
        if (c == EOF)
            break;
    }
    if (document == NULL || (c != EOF && !failed)) {
        fprintf(stderr, "out of memory\n");
        failed = 1;
    }
    free(document);
    return failed || fflush(stdout) != 0 ? 1 : 0;
}
#endif
