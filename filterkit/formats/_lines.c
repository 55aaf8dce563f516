/*
 * The svmlight reader's and writer's inner loops (filterkit.formats.svmlight), and the CSV reader's
 * cutting of rows into values (filterkit.formats.csv).
 *
 * parse_svmlight reads a block of lines into CSR arrays (see its comment), each row as the
 * grammar of svmlight.py's module description says: a label, then INDEX:VALUE
 * pairs (an index of 1 to 18 digits), separated by spaces and tabs; a number as
 * load_svmlight_file reads it ([+-], digits with an optional point or a point and digits, an
 * optional exponent; or nan, inf, infinity in any case).  Numbers are converted as Python's
 * float() converts them (correctly rounded).  The loop runs without the GIL.
 *
 * csv_gather, csv_cut and csv_ids find the rows of CSV text, cut them into values and number a column's
 * distinct values (see their comments).
 *
 * svmlight_text(text) turns the writer's sparse ARFF rows ("{0 LABEL,INDEX VALUE,...}\n", from
 * filterkit.arff._speedups.format_rows, so numbers are printed as everywhere else) into
 * svmlight rows ("LABEL INDEX:VALUE ...\n"), with a missing value ("?") as "nan".
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#define strtod_l _strtod_l
#define newlocale(mask, name, base) _create_locale(LC_NUMERIC, name)
#define LC_NUMERIC_MASK 0
typedef _locale_t locale_t;
#elif defined(__APPLE__)
#include <xlocale.h>
#endif

#include "../arff/numbers.h"
#include "../keyed_hash.h"

static locale_t c_numbers;

static int
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Whether the len bytes at s are the word (ASCII letters, any case). */
static int
is_word(const char *s, Py_ssize_t len, const char *word)
{
    Py_ssize_t n = (Py_ssize_t)strlen(word);
    if (len < n)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if ((s[i] | 0x20) != word[i])
            return 0;
    return 1;
}

/* The end of the number starting at s (before end); NULL if none starts there.  Its value in
   *value: digits and a point without an exponent by arff/numbers.h's exact_decimal when its
   exact case holds them; the rest by strtod, correctly rounded too (the bytes after a number
   are a space, a tab or the line's NUL). */
static const char *
read_number(const char *s, const char *end, double *value)
{
    const char *at = s;
    if (at < end && (*at == '+' || *at == '-'))
        at++;
    if (at < end && !is_digit(*at) && *at != '.') {
        if (is_word(at, end - at, "nan"))
            at += 3;
        else if (is_word(at, end - at, "inf"))
            at += is_word(at, end - at, "infinity") ? 8 : 3;
        else
            return NULL;
        *value = strtod_l(s, NULL, c_numbers);
        return at;
    }
    ShortDecimal decimal;
    at = scan_decimal(s, end, &decimal);
    if (!decimal.has_digit)
        return NULL;
    int exponent = 0;
    if (at < end && (*at == 'e' || *at == 'E')) {
        const char *e = at + 1;
        if (e < end && (*e == '+' || *e == '-'))
            e++;
        if (e < end && is_digit(*e)) {
            while (e < end && is_digit(*e))
                e++;
            at = e;
            exponent = 1;
        }
    }
    if (exponent || decimal.significant_digits > 15
        || !exact_decimal(decimal.significand, decimal.scale, decimal.negative, value))
        *value = strtod_l(s, NULL, c_numbers);
    return at;
}

/* A growing array of 8-byte items. */
typedef struct {
    char *data;
    Py_ssize_t size, capacity;
} Array;

static int
append(Array *array, const void *item)
{
    if (array->size == array->capacity) {
        Py_ssize_t capacity = array->capacity ? 2 * array->capacity : 1024;
        char *data = PyMem_RawRealloc(array->data, capacity * 8);
        if (!data)
            return -1;
        array->data = data;
        array->capacity = capacity;
    }
    memcpy(array->data + 8 * array->size++, item, 8);
    return 0;
}

/* The array as bytes, and its memory freed; NULL and an error if out of memory. */
static PyObject *
as_bytes(Array *array)
{
    PyObject *bytes = PyBytes_FromStringAndSize(array->data ? array->data : "", 8 * array->size);
    PyMem_RawFree(array->data);
    array->data = NULL;
    return bytes;
}

/* What parse_line finds; the three kinds of refused line are the module's constants of the same names. */
enum { ROW, NOT_A_ROW, NAN_LABEL, DESCENDING, NO_MEMORY };

typedef struct {
    Array label, label_start, label_length, indptr, index, value, line_of;
    int64_t before, after; /* the indices of a DESCENDING row */
} Parsed;

/* Parse one line (a row's text: stripped, without its comment) into out: ROW or what is wrong. */
static int
parse_line(const char *s, const char *end, const char *block, Parsed *out)
{
    const char *at = s;
    double label;
    at = read_number(at, end, &label);
    if (!at)
        return NOT_A_ROW;
    int64_t start = s - block, length = at - s, previous = -1;
    Py_ssize_t entries = out->index.size;
    for (;;) {
        const char *gap = at;
        while (at < end && (*at == ' ' || *at == '\t'))
            at++;
        if (at == end)
            break;
        if (at == gap)
            goto refused;
        const char *digits = at;
        int64_t index = 0;
        while (at < end && is_digit(*at) && at - digits < 18)
            index = index * 10 + (*at++ - '0');
        if (at == digits || at == end || *at != ':')
            goto refused;
        double value;
        const char *number_end = read_number(at + 1, end, &value);
        if (!number_end || (number_end < end && *number_end != ' ' && *number_end != '\t'))
            goto refused;
        at = number_end;
        if (index <= previous && out->before < 0) {
            out->before = previous;
            out->after = index;
        }
        previous = index;
        if (append(&out->index, &index) < 0 || append(&out->value, &value) < 0)
            return NO_MEMORY;
    }
    if (out->before >= 0) {
        out->index.size = out->value.size = entries;
        return label != label ? NAN_LABEL : DESCENDING;
    }
    if (label != label) {
        out->index.size = out->value.size = entries;
        return NAN_LABEL;
    }
    int64_t ends = out->index.size;
    return append(&out->label, &label) < 0 || append(&out->label_start, &start) < 0
                   || append(&out->label_length, &length) < 0 || append(&out->indptr, &ends) < 0
               ? NO_MEMORY
               : ROW;
refused:
    out->index.size = out->value.size = entries;
    out->before = -1;
    return NOT_A_ROW;
}

static int
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * parse_svmlight(block, start, rows, size, line_bytes) -> dict
 *
 * Reads the lines of block (each ending in "\n") from byte start, as the svmlight reader's
 * line loop did: each line's comment ("#" on) cut off, the rest stripped of ASCII white
 * space; blank lines skipped; the rest rows, until ``rows`` rows or rows of ``size`` bytes
 * (each row's text and a newline).  The dict: "stop", where it stopped; "lines", the lines it
 * read; "too_long", whether the next line is longer than line_bytes; "first", the offset of the
 * first row's line (-1: none); "held", the bytes of the rows' texts (each with a newline);
 * "error", None or a dict of what is wrong with a line, where reading stopped: "what"
 * (NOT_A_ROW, NAN_LABEL, or DESCENDING: index "after" after index "before"), "line" (the
 * how-manieth line read) and "text" (stripped, without comment).  The rows: "labels", bytes of
 * float64; "label_texts", a list of bytes; "indptr" and "indices" (as written), bytes of int64;
 * "values", bytes of float64; "line_of", bytes of int64, the number of lines before each row's.
 */
static PyObject *
parse_svmlight(PyObject *self, PyObject *args)
{
    Py_buffer in;
    Py_ssize_t at, rows, size, line_bytes;
    if (!PyArg_ParseTuple(args, "y*nnnn", &in, &at, &rows, &size, &line_bytes))
        return NULL;
    const char *block = in.buf, *block_end = block + in.len;
    Parsed out = {{0}};
    out.before = -1;
    int64_t zero = 0;
    Py_ssize_t seen = 0, first = -1, found = 0, held = 0;
    int too_long = 0, what = ROW;
    const char *text = NULL, *text_end = NULL;
    if (at < 0 || at > in.len || (in.len && block_end[-1] != '\n')) {
        PyBuffer_Release(&in);
        PyErr_SetString(PyExc_ValueError, "parse_svmlight: a block of whole lines");
        return NULL;
    }
    PyObject *result = NULL, *texts = NULL;
    if (append(&out.indptr, &zero) < 0)
        goto done;
    Py_BEGIN_ALLOW_THREADS
    while (at < in.len && found < rows && held < size) {
        const char *line = block + at, *end = memchr(line, '\n', block_end - line);
        if (end - line > line_bytes) {
            too_long = 1;
            break;
        }
        const char *hash = memchr(line, '#', end - line);
        text = line;
        text_end = hash ? hash : end;
        while (text < text_end && is_space(*text))
            text++;
        while (text_end > text && is_space(text_end[-1]))
            text_end--;
        at = end + 1 - block;
        seen++;
        if (text == text_end)
            continue;
        if (first < 0)
            first = line - block;
        what = parse_line(text, text_end, block, &out);
        if (what != ROW)
            break;
        int64_t before = seen - 1;
        if (append(&out.line_of, &before) < 0) {
            what = NO_MEMORY;
            break;
        }
        found++;
        held += text_end - text + 1;
    }
    Py_END_ALLOW_THREADS
    if (what == NO_MEMORY) {
        PyErr_NoMemory();
        goto done;
    }
    texts = PyList_New(out.label_start.size);
    if (!texts)
        goto done;
    for (Py_ssize_t r = 0; r < out.label_start.size; r++) {
        int64_t *start = (int64_t *)out.label_start.data, *length = (int64_t *)out.label_length.data;
        PyObject *label = PyBytes_FromStringAndSize(block + start[r], length[r]);
        if (!label)
            goto done;
        PyList_SET_ITEM(texts, r, label);
    }
    PyObject *error = Py_None;
    if (what != ROW)
        error = Py_BuildValue("{s:n,s:n,s:y#,s:L,s:L}", "what", (Py_ssize_t)what, "line", seen, "text", text,
                              (Py_ssize_t)(text_end - text), "before", (long long)out.before, "after",
                              (long long)out.after);
    else
        Py_INCREF(error);
    if (!error)
        goto done;
    result = Py_BuildValue("{s:n,s:n,s:n,s:N,s:n,s:N,s:N,s:O,s:N,s:N,s:N,s:N}", "stop", at, "lines", seen, "held", held,
                           "too_long", PyBool_FromLong(too_long), "first", first, "error", error, "labels",
                           as_bytes(&out.label), "label_texts", texts, "indptr", as_bytes(&out.indptr), "indices",
                           as_bytes(&out.index), "values", as_bytes(&out.value), "line_of", as_bytes(&out.line_of));
done:
    Py_XDECREF(texts);
    PyMem_RawFree(out.label.data);
    PyMem_RawFree(out.label_start.data);
    PyMem_RawFree(out.label_length.data);
    PyMem_RawFree(out.indptr.data);
    PyMem_RawFree(out.index.data);
    PyMem_RawFree(out.value.data);
    PyMem_RawFree(out.line_of.data);
    PyBuffer_Release(&in);
    return result;
}

/* svmlight_text(text) -> bytes: see the module's comment. */
static PyObject *
svmlight_text(PyObject *self, PyObject *args)
{
    Py_buffer in;
    if (!PyArg_Parse(args, "y*", &in))
        return NULL;
    Py_ssize_t length = in.len;
    const char *s = in.buf, *end = s + length;
    Py_ssize_t missing = 0;
    for (const char *c = s; (c = memchr(c, '?', end - c)); c++)
        missing++;
    PyObject *result = PyBytes_FromStringAndSize(NULL, length + 2 * missing);
    if (!result) {
        PyBuffer_Release(&in);
        return NULL;
    }
    char *at = PyBytes_AS_STRING(result);
    int malformed = 0;
    Py_BEGIN_ALLOW_THREADS
    /* every scan stops at end: a row not of the writer's form is refused, never read past */
    while (s < end && !malformed) {
        const char *space = memchr(s, ' ', end - s);
        if (!space) {
            malformed = 1;
            break;
        }
        s = space + 1; /* past "{0 " */
        while (s < end && *s != ',' && *s != '}')
            *at++ = *s++;
        while (s < end && *s == ',') {
            *at++ = ' ';
            for (s++; s < end && *s != ' '; s++)
                *at++ = *s;
            if (s >= end)
                break;
            *at++ = ':';
            if (end - s > 2 && s[1] == '?' && (s[2] == ',' || s[2] == '}')) {
                memcpy(at, "nan", 3);
                at += 3;
                s += 2;
            } else {
                for (s++; s < end && *s != ',' && *s != '}'; s++)
                    *at++ = *s;
            }
        }
        if (end - s < 2 || s[0] != '}' || s[1] != '\n') {
            malformed = 1;
            break;
        }
        *at++ = '\n';
        s += 2; /* "}\n" */
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&in);
    if (malformed) {
        Py_DECREF(result);
        PyErr_SetString(PyExc_ValueError, "svmlight_text: a row is not \"{0 LABEL,INDEX VALUE,...}\\n\"");
        return NULL;
    }
    _PyBytes_Resize(&result, at - PyBytes_AS_STRING(result));
    return result;
}

/* CSV: csv_gather finds a block's rows, csv_cut cuts a group of them into values; csv.py's module description
   says the grammar, and its _fields is the reference both are tested against.  The row of a value: after blanks,
   a '"' opens a double-quoted value ("" inside is one '"') that may hold line ends; a '\'' opens a single-quoted
   one (ARFF's backslash escapes) when it closes on its line and only blanks come before the comma or line end
   after it (as _fields' _QUOTED); the rest of a value runs to a comma or a line end.  csv_cut takes the rows
   csv_gather found and never looks for a row's end itself. */

/* The "\n" that ends the row starting at s (before end), as csv.py's reader cuts rows; NULL when the row does
   not end before end.  *lines gets the line ends inside it (in double-quoted values). */
static const char *
csv_row_end(const char *s, const char *end, Py_ssize_t *lines)
{
    const char *at = s, *line_end = memchr(s, '\n', end - s);
    *lines = 0;
    if (line_end && !memchr(s, '"', line_end - s) && !memchr(s, '\'', line_end - s))
        return line_end;
    for (;;) {
        while (at < end && (*at == ' ' || *at == '\t'))
            at++;
        if (at < end && *at == '"') {
            const char *open = ++at;
            for (;;) {
                const char *q = memchr(at, '"', end - at);
                if (!q)
                    return NULL;
                at = q + 1;
                if (at < end && *at == '"') {
                    at++;
                    continue;
                }
                break;
            }
            for (const char *c = open; (c = memchr(c, '\n', at - c)); c++)
                ++*lines;
        } else if (at < end && *at == '\'') {
            /* single-quoted where it closes on its line and blanks alone follow it to a comma or the line's
               end, as _fields' _QUOTED reads it; otherwise the quote is text, up to the first comma */
            const char *c = at + 1;
            while (c < end && *c != '\'' && *c != '\n') {
                if (*c == '\\') {
                    if (c + 1 >= end || c[1] == '\n')
                        break;
                    c++;
                }
                c++;
            }
            if (c < end && *c == '\'') {
                const char *rest = c + 1;
                while (rest < end && (*rest == ' ' || *rest == '\t'))
                    rest++;
                if (rest < end && *rest == '\n')
                    return rest;
                if (rest < end && *rest == ',')
                    at = rest;
            }
        }
        while (at < end && *at != ',' && *at != '\n')
            at++;
        if (at == end)
            return NULL;
        if (*at == '\n')
            return at;
        at++;
    }
}

/* Whether the bytes [s, end) are UTF-8 text. */
static int
utf8_valid(const unsigned char *s, const unsigned char *end)
{
    while (s < end) {
        unsigned int c = *s;
        if (c < 0x80) {
            s++;
            continue;
        }
        int more = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
        if (more < 0 || end - s <= more)
            return 0;
        for (int k = 1; k <= more; k++)
            if ((s[k] & 0xC0) != 0x80)
                return 0;
        if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) || (c == 0xF0 && s[1] < 0x90)
            || (c == 0xF4 && s[1] > 0x8F))
            return 0;
        s += more + 1;
    }
    return 1;
}

/* A value's text [text, end) as a number when it is a plain decimal (an optional exponent), which Java's
   Double.valueOf and Python's float() read alike, correctly rounded; 0 for anything else (csv.py's _number
   reads the rest: hexadecimal, a suffix, NaN, Infinity, blanks around). */
static int
csv_number(const char *text, const char *end, double *value)
{
    ShortDecimal decimal;
    const char *at = scan_decimal(text, end, &decimal);
    if (!decimal.has_digit)
        return 0;
    int exponent = 0;
    if (at < end && (*at == 'e' || *at == 'E')) {
        const char *e = at + 1;
        if (e < end && (*e == '+' || *e == '-'))
            e++;
        if (e >= end || !is_digit(*e))
            return 0;
        while (e < end && is_digit(*e))
            e++;
        at = e;
        exponent = 1;
    }
    if (at != end)
        return 0;
    if (!exponent && decimal.significant_digits <= 15
        && exact_decimal(decimal.significand, decimal.scale, decimal.negative, value))
        return 1;
    char buffer[64];
    if (end - text >= (Py_ssize_t)sizeof(buffer))
        return 0;
    memcpy(buffer, text, end - text);
    buffer[end - text] = '\0';
    *value = strtod_l(buffer, NULL, c_numbers);
    return 1;
}

/* Where the plain decimal at s ends (at a comma or end, the row's end) when it is one exact_decimal reads (no
   exponent, at most 15 significant digits), its value in *value; NULL for any other value: csv_cut's one step
   for the usual value of a numeric column. */
static const char *
csv_plain_number(const char *s, const char *end, double *value)
{
    ShortDecimal decimal;
    const char *at = scan_decimal(s, end, &decimal);
    if (!decimal.has_digit || (at < end && *at != ',') || decimal.significant_digits > 15
        || !exact_decimal(decimal.significand, decimal.scale, decimal.negative, value))
        return NULL;
    return at;
}

/* The kinds of value csv_cut finds, and the flags added to them. */
enum { CELL_MISSING, CELL_NUMBER, CELL_TEXT, CELL_MAYBE };
enum { CELL_QUOTED = 4, CELL_DOUBLED = 8, CELL_ESCAPED = 16 };

static unsigned char maybe_number[256];

/*
 * csv_gather(block, start, rows, size, line_bytes) -> (text, lines, ends, stop, seen, status)
 *
 * The CSV reader's row loop over a block of whole lines (each ending with "\n", line ends made LF), from byte
 * ``start``: its rows (csv_row_end), blank ones (ASCII white space only, as bytes.strip() strips) skipped,
 * gathered into ``text`` joined by "\n", until ``rows`` rows or at least ``size`` bytes (each row's length plus
 * one).  ``lines`` (bytes of int64): per row, the lines of the block before it since ``start``; ``ends``: where
 * each row ends in ``text``; ``stop``: where the next row starts, ``seen`` the lines passed.  ``status``: 0, or 1
 * where the row at ``stop`` does not end in the block, 2 where it is longer than ``line_bytes``.  Without the GIL.
 */
static PyObject *
csv_gather(PyObject *self, PyObject *args)
{
    PyObject *block;
    Py_ssize_t start, rows_wanted, size_wanted, line_bytes;
    if (!PyArg_ParseTuple(args, "O!nnnn", &PyBytes_Type, &block, &start, &rows_wanted, &size_wanted, &line_bytes))
        return NULL;
    const char *text = PyBytes_AS_STRING(block);
    Py_ssize_t length = PyBytes_GET_SIZE(block);
    if (start < 0 || start > length || rows_wanted < 1 || (length && text[length - 1] != '\n')) {
        PyErr_SetString(PyExc_ValueError, "csv_gather: inconsistent arguments");
        return NULL;
    }
    Py_ssize_t most_rows = (length - start) / 2 + 1;
    if (most_rows > rows_wanted)
        most_rows = rows_wanted;
    PyObject *gathered = PyBytes_FromStringAndSize(NULL, length - start);
    PyObject *lines = PyBytes_FromStringAndSize(NULL, most_rows * (Py_ssize_t)sizeof(int64_t));
    PyObject *ends = PyBytes_FromStringAndSize(NULL, most_rows * (Py_ssize_t)sizeof(int64_t));
    if (!gathered || !lines || !ends)
        goto failed;
    char *out = PyBytes_AS_STRING(gathered);
    int64_t *line_of = (int64_t *)PyBytes_AS_STRING(lines), *end_of = (int64_t *)PyBytes_AS_STRING(ends);
    Py_ssize_t written = 0, rows = 0, size = 0, at = start, seen = 0;
    int status = 0;
    Py_BEGIN_ALLOW_THREADS
    while (at < length) {
        Py_ssize_t inner;
        const char *row_end = csv_row_end(text + at, text + length, &inner);
        if (!row_end) {
            status = 1;
            break;
        }
        Py_ssize_t first = at, last = row_end - text;
        if (last - first > line_bytes) {
            status = 2;
            break;
        }
        at = last + 1;
        seen += inner + 1;
        Py_ssize_t blank = first;
        while (blank < last && (text[blank] == ' ' || text[blank] == '\t' || text[blank] == '\v' || text[blank] == '\f'))
            blank++;
        if (blank == last)
            continue;
        if (rows)
            out[written++] = '\n';
        memcpy(out + written, text + first, (size_t)(last - first));
        written += last - first;
        line_of[rows] = seen - inner - 1;
        end_of[rows++] = written;
        size += last - first + 1;
        if (rows == rows_wanted || size >= size_wanted)
            break;
    }
    Py_END_ALLOW_THREADS
    if (_PyBytes_Resize(&gathered, written) < 0)
        gathered = NULL;
    if (_PyBytes_Resize(&lines, rows * (Py_ssize_t)sizeof(int64_t)) < 0)
        lines = NULL;
    if (_PyBytes_Resize(&ends, rows * (Py_ssize_t)sizeof(int64_t)) < 0)
        ends = NULL;
    if (!gathered || !lines || !ends)
        goto failed;
    return Py_BuildValue("(NNNnni)", gathered, lines, ends, at, seen, status);
failed:
    Py_XDECREF(gathered);
    Py_XDECREF(lines);
    Py_XDECREF(ends);
    return NULL;
}

/* One value of a row, from s to end (the row's end, as csv_gather found it): its text [*text, *text_end) (a
   quoted one without its quotes, "" still doubled, escapes not read) and its flags; returns where the value
   ends (at a comma or end), NULL where a double quote does not end its value (csv.py's _fields then names the
   error).  Inside a row a line end is a byte like any other, as _fields reads it: quoted values may hold the
   row's line ends, and an unquoted one runs to a comma. */
static const char *
csv_value(const char *s, const char *end, const char **text, const char **text_end, int *flags)
{
    const char *q = s;
    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    *flags = 0;
    if (q < end && (*q == '"' || *q == '\'')) {
        char quote = *q;
        const char *c = q + 1;
        int escaped = 0;
        if (quote == '"') {
            for (;;) {
                c = memchr(c, '"', end - c);
                if (!c)
                    return NULL;
                if (c + 1 < end && c[1] == '"') {
                    *flags |= CELL_DOUBLED;
                    c += 2;
                    continue;
                }
                break;
            }
        } else {
            while (c < end && *c != '\'') {
                if (*c == '\\') {
                    escaped = 1;
                    if (++c == end)
                        break;
                }
                c++;
            }
        }
        if (c < end) {
            const char *after = c + 1;
            while (after < end && (*after == ' ' || *after == '\t'))
                after++;
            if (after == end || *after == ',') {
                *text = q + 1;
                *text_end = c;
                *flags |= CELL_QUOTED | (escaped ? CELL_ESCAPED : 0);
                return after;
            }
        }
        if (quote == '"')
            return NULL;
        *flags = 0; /* a single quote that does not quote the value whole is part of its text */
    }
    const char *stop = memchr(s, ',', end - s);
    *text = s;
    *text_end = stop ? stop : end;
    return *text_end;
}

/* The kind of a value (CELL_MISSING, CELL_NUMBER with *number, CELL_TEXT or CELL_MAYBE), its flags added. */
static unsigned char
csv_kind(const char *text, const char *end, int flags, const unsigned char *blank, double *number)
{
    *number = NAN;
    if (!(flags & CELL_QUOTED)) {
        const char *a = text, *b = end;
        while (a < b && blank[(unsigned char)*a])
            a++;
        while (b > a && blank[(unsigned char)b[-1]])
            b--;
        if (a == b || (b - a == 1 && *a == '?'))
            return CELL_MISSING;
    }
    if (text == end)
        return CELL_TEXT | flags;
    if (!(flags & (CELL_DOUBLED | CELL_ESCAPED)) && csv_number(text, end, number))
        return CELL_NUMBER | flags;
    if (flags & CELL_ESCAPED)
        return CELL_MAYBE | flags;
    for (const char *c = text; c < end; c++)
        if (!maybe_number[(unsigned char)*c])
            return CELL_TEXT | flags;
    return CELL_MAYBE | flags;
}

/*
 * csv_cut(text, ends, width, blanks) -> (declined, numbers, kinds, starts, ends)
 *
 * The rows of ``text`` (csv_gather's, joined by "\n"; ``ends``, bytes of int64: where each row ends in it, as
 * csv_gather gives them) cut into their ``width`` values each, row by row (arrays of rows × width): each value's
 * number (float64; NaN unless CELL_NUMBER), kind (uint8, CELL_* and flags; missing: unquoted and, its ``blanks``
 * stripped, empty or "?"), and where its text starts and ends in ``text`` (int64).  ``declined``: the first row
 * csv.py's _fields must read (another number of values, a double quote that does not end its value, bytes that
 * are not UTF-8), or -1.  A row is the text between the ends it is given, line ends inside it included.  Without
 * the GIL.
 */
static PyObject *
csv_cut(PyObject *self, PyObject *args)
{
    Py_buffer in, row_ends, blanks;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "y*y*ny*", &in, &row_ends, &width, &blanks))
        return NULL;
    unsigned char blank[256] = {0};
    for (Py_ssize_t i = 0; i < blanks.len; i++)
        blank[((unsigned char *)blanks.buf)[i]] = 1;
    PyBuffer_Release(&blanks);
    PyObject *result = NULL, *numbers = NULL, *kinds = NULL, *starts = NULL, *ends = NULL;
    const int64_t *row_end = row_ends.buf;
    Py_ssize_t rows = row_ends.len / 8;
    int ascending = row_ends.len % 8 == 0;
    for (Py_ssize_t r = 0; r < rows && ascending; r++)
        ascending = row_end[r] >= (r ? row_end[r - 1] + 1 : 0) && row_end[r] <= in.len;
    if (width < 1 || !ascending) {
        PyErr_SetString(PyExc_ValueError, "csv_cut: a width of at least 1 and rows' ends that ascend within the text");
        goto done;
    }
    /* a row of width values holds width - 1 commas at least, and the rows a newline between each two: rows too
       short for theirs are declined before their arrays (25 bytes a value) are made, for _checked_fields to report */
    Py_ssize_t declined = rows > (in.len + 1) / width ? 0 : -1, cells = declined < 0 ? rows * width : 0;
    numbers = PyBytes_FromStringAndSize(NULL, cells * 8);
    kinds = PyBytes_FromStringAndSize(NULL, cells);
    starts = PyBytes_FromStringAndSize(NULL, cells * 8);
    ends = PyBytes_FromStringAndSize(NULL, cells * 8);
    if (!numbers || !kinds || !starts || !ends)
        goto done;
    double *number = (double *)PyBytes_AS_STRING(numbers);
    unsigned char *kind = (unsigned char *)PyBytes_AS_STRING(kinds);
    int64_t *start = (int64_t *)PyBytes_AS_STRING(starts), *end_at = (int64_t *)PyBytes_AS_STRING(ends);
    const char *base = in.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < rows && declined < 0; r++) {
        const char *at = base + (r ? row_end[r - 1] + 1 : 0), *end = base + row_end[r];
        Py_ssize_t k = 0;
        for (;;) {
            Py_ssize_t cell = r * width + k;
            const char *stop = k < width ? csv_plain_number(at, end, &number[cell]) : NULL;
            if (stop) {
                kind[cell] = CELL_NUMBER;
                start[cell] = at - base;
                end_at[cell] = stop - base;
            } else {
                const char *text, *text_end;
                int flags;
                stop = csv_value(at, end, &text, &text_end, &flags);
                if (!stop || k == width || !utf8_valid((const unsigned char *)at, (const unsigned char *)stop)) {
                    declined = r;
                    break;
                }
                kind[cell] = csv_kind(text, text_end, flags, blank, &number[cell]);
                start[cell] = text - base;
                end_at[cell] = text_end - base;
            }
            k++;
            if (stop == end)
                break;
            at = stop + 1; /* past the comma */
        }
        if (declined < 0 && k != width)
            declined = r;
    }
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(nOOOO)", declined, numbers, kinds, starts, ends);
done:
    Py_XDECREF(numbers);
    Py_XDECREF(kinds);
    Py_XDECREF(starts);
    Py_XDECREF(ends);
    PyBuffer_Release(&in);
    PyBuffer_Release(&row_ends);
    return result;
}

/* A slot of csv_ids' table: a value's hash and its row (-1: empty). */
typedef struct {
    uint64_t hash;
    int64_t row;
} Slot;

/* The table twice as large, its values moved; 0 when out of memory. */
static int
grown(Slot **table, Py_ssize_t *capacity)
{
    Py_ssize_t larger = 2 * *capacity;
    Slot *moved = PyMem_RawMalloc(larger * sizeof(Slot));
    if (!moved)
        return 0;
    memset(moved, 0xff, larger * sizeof(Slot));
    for (Py_ssize_t k = 0; k < *capacity; k++) {
        if ((*table)[k].row < 0)
            continue;
        Py_ssize_t slot = (Py_ssize_t)((*table)[k].hash & (uint64_t)(larger - 1));
        while (moved[slot].row >= 0)
            slot = (slot + 1) & (larger - 1);
        moved[slot] = (*table)[k];
    }
    PyMem_RawFree(*table);
    *table = moved;
    *capacity = larger;
    return 1;
}

/*
 * csv_ids(text, kinds, starts, ends, width, column) -> (ids, firsts)
 *
 * For one column of csv_cut's values: which of the column's distinct present values each row holds (int32, in
 * the order they first appear; -1: missing), told apart by their bytes and quoting; ``firsts`` (int64), the row
 * each first appears on.  Without the GIL.
 */
static PyObject *
csv_ids(PyObject *self, PyObject *args)
{
    Py_buffer in, kinds, starts, ends;
    Py_ssize_t width, column;
    if (!PyArg_ParseTuple(args, "y*y*y*y*nn", &in, &kinds, &starts, &ends, &width, &column))
        return NULL;
    PyObject *result = NULL, *ids = NULL, *firsts = NULL;
    Py_ssize_t rows = width > 0 ? kinds.len / width : 0, capacity = 256;
    Slot *table = NULL;
    if (width < 1 || column < 0 || column >= width || kinds.len != rows * width || starts.len != kinds.len * 8
        || ends.len != kinds.len * 8) {
        PyErr_SetString(PyExc_ValueError, "csv_ids: csv_cut's arrays and a column of them");
        goto done;
    }
    ids = PyBytes_FromStringAndSize(NULL, rows * 4);
    firsts = PyBytes_FromStringAndSize(NULL, rows * 8);
    table = PyMem_RawMalloc(capacity * sizeof(Slot));
    if (!ids || !firsts || !table) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    const char *base = in.buf;
    const unsigned char *kind = kinds.buf;
    const int64_t *start = starts.buf, *end_at = ends.buf;
    int32_t *id = (int32_t *)PyBytes_AS_STRING(ids);
    int64_t *first = (int64_t *)PyBytes_AS_STRING(firsts);
    Py_ssize_t found = 0;
    int out_of_memory = 0;
    const int same = CELL_QUOTED | CELL_DOUBLED | CELL_ESCAPED;
    Py_BEGIN_ALLOW_THREADS
    memset(table, 0xff, capacity * sizeof(Slot));
    for (Py_ssize_t r = 0; r < rows; r++) {
        Py_ssize_t cell = r * width + column;
        id[r] = -1;
        if ((kind[cell] & 3) == CELL_MISSING)
            continue;
        const char *text = base + start[cell];
        Py_ssize_t length = end_at[cell] - start[cell];
        uint64_t hash = hash_of(text, length) ^ (uint64_t)(kind[cell] & same); /* keyed: keyed_hash.h */
        for (Py_ssize_t slot = (Py_ssize_t)(hash & (uint64_t)(capacity - 1));; slot = (slot + 1) & (capacity - 1)) {
            int64_t other = table[slot].row;
            if (other < 0) {
                table[slot].hash = hash;
                table[slot].row = r;
                first[found] = r;
                id[r] = (int32_t)found++;
                if (2 * found > capacity && !grown(&table, &capacity))
                    out_of_memory = 1;
                break;
            }
            Py_ssize_t at = other * width + column;
            if (table[slot].hash == hash && end_at[at] - start[at] == length && (kind[at] & same) == (kind[cell] & same)
                && same_bytes(base + start[at], text, length)) {
                id[r] = id[other];
                break;
            }
        }
        if (out_of_memory)
            break;
    }
    Py_END_ALLOW_THREADS
    if (out_of_memory) {
        PyErr_NoMemory();
        goto done;
    }
    if (_PyBytes_Resize(&firsts, found * 8) < 0)
        goto done;
    result = Py_BuildValue("(OO)", ids, firsts);
done:
    Py_XDECREF(ids);
    Py_XDECREF(firsts);
    PyMem_RawFree(table);
    PyBuffer_Release(&in);
    PyBuffer_Release(&kinds);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&ends);
    return result;
}

static PyMethodDef methods[] = {
    {"parse_svmlight", parse_svmlight, METH_VARARGS, "Parse svmlight data lines into CSR arrays."},
    {"svmlight_text", svmlight_text, METH_O, "Turn the writer's sparse ARFF rows into svmlight rows."},
    {"csv_gather", csv_gather, METH_VARARGS, "Gather the CSV rows of a block of lines."},
    {"csv_cut", csv_cut, METH_VARARGS, "Cut a group of CSV rows into their values."},
    {"csv_ids", csv_ids, METH_VARARGS, "Number the distinct values of a column of cut CSV rows."},
    {NULL, NULL, 0, NULL},
};

/* The interface number filterkit/kernels.py (INTERFACES) expects: bump both whenever a function's arguments or
   results change, so that a module built from older source is refused with one error line instead of misbehaving. */
#define INTERFACE 5

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lines", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__lines(void)
{
    c_numbers = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    for (const char *c = "0123456789abcdefABCDEFxXpPNIinty.+-"; *c; c++)
        maybe_number[(unsigned char)*c] = 1;
    for (int c = 0; c <= 0x20; c++)
        maybe_number[c] = 1;
    if (!c_numbers)
        return PyErr_NoMemory();
    if (!draw_hash_key())
        return NULL;
    PyObject *created = PyModule_Create(&module);
    if (created != NULL
        && (PyModule_AddIntConstant(created, "INTERFACE", INTERFACE) < 0
            || PyModule_AddIntConstant(created, "NOT_A_ROW", NOT_A_ROW) < 0
            || PyModule_AddIntConstant(created, "NAN_LABEL", NAN_LABEL) < 0
            || PyModule_AddIntConstant(created, "DESCENDING", DESCENDING) < 0))
        Py_CLEAR(created);
    return created;
}
