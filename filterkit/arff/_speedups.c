/*
 * The compiled reader and writer loops of filterkit.arff (a build needs a C compiler).
 *
 * tokenize_plain(data, rows, per_row) splits a group of dense data rows as the reader's tokenizer
 * does (scan_rows), parses every numeric-looking word (it starts with one of "0123456789+-."
 * and holds only those and "eE") with Python's own correctly rounded parser, and unescapes
 * the quoted values into one run of bytes; reader._parse_dense_plain looks up the rest.  It
 * declines what only the tokenizer reads (braces, '%' comments, "0x", quotes left open, text
 * that is not UTF-8, a row of another number of values), which the tokenizer then reads or
 * reports; tests check both give identical chunks.
 *
 * gather_rows does the reader's line loop for a block of lines (strip, skip blanks and
 * comments, join, count lines) and parse_sparse_rows reads plain sparse rows straight into
 * CSR arrays in one pass; each runs without the GIL, so the reading thread works beside
 * the writer's.  Tests compare them with tests/oracles.py and the tokenizer.
 *
 * format_rows (format_rows.c) does every writer's inner loop; Labels (labels.c) holds the
 * nominal columns' labels for both.  The numbers are parsed by
 * numbers.h (parse_simple, exact_decimal); this file is the reader's part and the module.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../ascii_bytes.h"
#include "format_rows.h"
#include "labels.h"
#include "numbers.h"

static unsigned char separator[256];
static unsigned char needs_tokenizer[256];
static unsigned char number_start[256];
static unsigned char number_char[256];
/* What gather_rows strips from a line's ends and takes for a line of nothing: the separators, as tokens.SEPARATORS
   (every byte up to the space, and the comma). */
static unsigned char blank[256];
/* A separator within a line: blank's bytes but the line end, which ends a row. */
static unsigned char gap[256];
/* The ASCII bytes besides white space and control characters that make a name quoted, and what follows the
   backslash of each byte a quoted name escapes (tokens._QUOTE_ESCAPES), 0 for the others. */
static unsigned char needs_quoting[256];
static char quote_escape[256];

/* TOKEN_LABEL: a quoted value of a nominal column found among its labels as it was scanned, its number the
   label's code and its text not kept. */
enum { TOKEN_WORD, TOKEN_NUMBER, TOKEN_QUOTED, TOKEN_LABEL };

/* Where scan_rows puts each token's number, offsets and kind, and each quoted token's
   unescaped bytes (``text``, the token's end in it in ``text_end``). */
typedef struct {
    double *number;
    int64_t *start;
    int64_t *end;
    unsigned char *kind;
    char *text;
    int64_t *text_end;
} Tokens;

/* Python's correctly rounded parse of a numeric-looking token that parse_simple declines,
   taking the GIL for it; 0 when it is not a whole number. */
static int
parse_with_python(const char *source, Py_ssize_t size, double *value)
{
    char buffer[64];
    char *stop = NULL;
    if (size >= (Py_ssize_t)sizeof(buffer))
        return 0;
    /* the token ends at a separator or at the end of the bytes; the copy bounds the parse */
    memcpy(buffer, source, size);
    buffer[size] = '\0';
    PyGILState_STATE gil = PyGILState_Ensure();
    *value = PyOS_string_to_double(buffer, &stop, NULL);
    int parsed = !(*value == -1.0 && PyErr_Occurred()) && stop == buffer + size;
    PyErr_Clear();
    PyGILState_Release(gil);
    return parsed;
}

/* The escape after a backslash at text[*at] written to out as UTF-8, as tokens._unescape reads
   it (Java's StreamTokenizer): a letter of "ntrbfav", one to three octal digits for a code up
   to 255 (never read past length), any other byte for itself.  Returns the bytes written. */
static Py_ssize_t
unescape_one(const char *text, Py_ssize_t length, Py_ssize_t *at, char *out)
{
    static const char letters[] = "ntrbfav", codes[] = "\n\t\r\b\f\a\v";
    unsigned char c = (unsigned char)text[*at];
    const char *letter = c ? strchr(letters, c) : NULL;
    (*at)++;
    if (c < '0' || c > '7') {
        *out = letter ? codes[letter - letters] : (char)c;
        return 1;
    }
    unsigned int code = c - '0';
    for (int more = c <= '3' ? 2 : 1; more && *at < length && text[*at] >= '0' && text[*at] <= '7'; more--)
        code = code * 8 + (unsigned int)(text[(*at)++] - '0');
    if (code < 0x80) {
        *out = (char)code;
        return 1;
    }
    out[0] = (char)(0xC0 | (code >> 6));
    out[1] = (char)(0x80 | (code & 0x3F));
    return 2;
}

/* The quoted string starting at text[*at] (its quote mark): *at moved past the closing quote
   and, when out is set, its unescaped bytes written at out + *written; 0 when the quote is
   left open on its line.  The runs between escapes are found and copied by memchr and memcpy,
   many bytes at a step (documents are long: byte by byte, this was a sixth of ``words``). */
static int
scan_quoted(const char *text, Py_ssize_t length, Py_ssize_t *at, char *out, Py_ssize_t *written)
{
    char quote = text[*at];
    Py_ssize_t i = *at + 1;
    const char *close = text + i - 1; /* the next quote mark from i on once looked for; NULL: there is none */
    for (;;) {
        if (close != NULL && close < text + i) /* not looked for, or escaped: look (again) */
            close = memchr(text + i, quote, (size_t)(length - i));
        Py_ssize_t end = close != NULL ? close - text : length;
        const char *escape = memchr(text + i, '\\', (size_t)(end - i));
        Py_ssize_t stop = escape != NULL ? escape - text : end;
        if (memchr(text + i, '\n', (size_t)(stop - i)) != NULL)
            return 0;
        if (out) {
            memcpy(out + *written, text + i, (size_t)(stop - i));
            *written += stop - i;
        }
        i = stop;
        if (escape == NULL)
            break;
        if (i + 1 >= length || text[i + 1] == '\n')
            return 0;
        if (out) {
            i++;
            *written += unescape_one(text, length, &i, out + *written);
        } else {
            i += 2;
        }
    }
    if (close == NULL)
        return 0;
    *at = i + 1;
    return 1;
}

/*
 * Split length bytes of rows (joined by single newlines) as tokens.iter_tokens does (words end at a
 * separator or a quote; a quoted string ends at its closing quote, backslash escapes in it) into out,
 * which has room for ``rows`` times ``per_row`` tokens: numeric-looking words parsed, quoted strings
 * unescaped; with ``labels`` (else NULL), a quoted value of a nominal column that is one of its labels is
 * that label's code (TOKEN_LABEL), its unescaped bytes dropped, so that quoted labels cost what bare ones do.
 * Returns the number of tokens and sets *quoted to the number of quoted ones left (TOKEN_QUOTED); -1 for
 * what only the tokenizer reads (a brace, a '%' comment, a quote left open, "0x", a row of other than
 * ``per_row`` tokens); -2 when a numeric-looking word is not a whole number.  Runs without the GIL.
 */
static Py_ssize_t
scan_rows(const char *text, Py_ssize_t length, Py_ssize_t rows, Py_ssize_t per_row, const Labels *labels, Tokens out,
          Py_ssize_t *quoted)
{
    Py_ssize_t token = 0, strings = 0, written = 0, i = 0, row_end = per_row;
    while (i < length) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n') { /* a row ends: it held per_row tokens, and there is room for the next */
            if (token != row_end || row_end == rows * per_row)
                return -1;
            row_end += per_row;
            i++;
            continue;
        }
        if (separator[c] && c != '{' && c != '}') {
            i++;
            continue;
        }
        if (c == '{' || c == '}' || c == '%' || token == row_end)
            return -1;
        Py_ssize_t begin = i;
        int kind = number_start[c] ? TOKEN_NUMBER : TOKEN_WORD;
        double value = 0.0;
        if (c == '\'' || c == '"') {
            kind = TOKEN_QUOTED;
            Py_ssize_t from = written;
            if (!scan_quoted(text, length, &i, out.text, &written))
                return -1;
            Py_ssize_t label = labels ? labels_find_quoted(labels, token - (row_end - per_row), out.text + from,
                                                           written - from)
                                      : -1;
            if (label >= 0) {
                kind = TOKEN_LABEL;
                value = labels->value[label];
                written = from;
            }
        } else {
            for (; i < length && !separator[(unsigned char)text[i]] && !needs_tokenizer[(unsigned char)text[i]]; i++) {
                if (!number_char[(unsigned char)text[i]])
                    kind = TOKEN_WORD;
                if ((text[i] == 'x' || text[i] == 'X') && i > begin && text[i - 1] == '0')
                    return -1;
            }
            if (kind == TOKEN_NUMBER && !parse_simple(text + begin, i - begin, &value)
                && !parse_with_python(text + begin, i - begin, &value))
                return -2;
        }
        out.number[token] = value;
        out.start[token] = begin;
        out.end[token] = i;
        out.kind[token] = (unsigned char)kind;
        if (kind == TOKEN_QUOTED)
            out.text_end[strings++] = written;
        token++;
    }
    *quoted = strings;
    return token;
}

/* Whether each of the ``quoted`` texts (unescaped, one after another, ``text_end`` where each ends) is UTF-8: checked
 * text by text, as a sequence cut by a text's end is not a character; without the GIL. */
static int
texts_are_utf8(const char *unescaped, const int64_t *text_end, Py_ssize_t quoted)
{
    for (Py_ssize_t k = 0, from = 0; k < quoted; from = (Py_ssize_t)text_end[k++])
        if (!valid_utf8((const unsigned char *)unescaped + from, (Py_ssize_t)text_end[k] - from))
            return 0;
    return 1;
}

/*
 * tokenize_plain(data, rows, per_row, labels=None) -> False | None | (numbers, starts, ends, kinds, texts, text_ends)
 *
 * A group of ``rows`` dense data rows of ``per_row`` values each, split by scan_rows in one pass: per token
 * its float64 value (0 unless numeric-looking or a label; a bytearray, for the values looked up to be filled
 * in), int64 start and end offsets and uint8 kind (TOKEN_WORD, TOKEN_NUMBER, TOKEN_QUOTED, and TOKEN_LABEL for
 * a quoted value that ``labels``, the reader's Labels table, holds for its column, with the label's code);
 * token k is row k // per_row's value k % per_row.  Then the other quoted tokens' unescaped UTF-8 bytes one
 * after another (bytes) and where each ends among them (int64): their strings are made only where they are
 * needed (``decode_texts``), and ``words`` cuts documents from these bytes.  The arrays are made rows · per_row
 * long at once, not counted by a first pass (two fifths of reading short documents).  False for a row of other
 * than ``per_row`` values and for what only the tokenizer reads (scan_rows's -1, or a quoted text that is not
 * UTF-8); None when a numeric-looking word is not a whole number.
 */
static PyObject *
tokenize_plain(PyObject *self, PyObject *args)
{
    PyObject *data, *labels = Py_None;
    Py_ssize_t rows, per_row;
    if (!PyArg_ParseTuple(args, "Snn|O:tokenize_plain", &data, &rows, &per_row, &labels))
        return NULL;
    if (labels != Py_None && !PyObject_TypeCheck(labels, &LabelsType)) {
        PyErr_SetString(PyExc_TypeError, "tokenize_plain: labels is a Labels table or None");
        return NULL;
    }
    if (rows < 1 || per_row < 1 || rows > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(double) / per_row) {
        PyErr_SetString(PyExc_ValueError, "tokenize_plain takes at least one row of at least one value");
        return NULL;
    }
    const char *text = PyBytes_AS_STRING(data);
    Py_ssize_t length = PyBytes_GET_SIZE(data), tokens = rows * per_row, count, quoted = 0;
    int utf8 = 1;
    if (tokens > length) /* each value takes a byte at least: declined before its arrays are made, which would
                            be rows · per_row · 33 bytes for a wide file's short rows (an error the tokenizer reports) */
        Py_RETURN_FALSE;
    PyObject *numbers = PyByteArray_FromStringAndSize(NULL, tokens * (Py_ssize_t)sizeof(double));
    PyObject *starts = PyBytes_FromStringAndSize(NULL, tokens * (Py_ssize_t)sizeof(int64_t));
    PyObject *ends = PyBytes_FromStringAndSize(NULL, tokens * (Py_ssize_t)sizeof(int64_t));
    PyObject *kinds = PyBytes_FromStringAndSize(NULL, tokens);
    PyObject *texts = PyBytes_FromStringAndSize(NULL, length); /* unescaping never lengthens a text */
    PyObject *text_ends = PyBytes_FromStringAndSize(NULL, tokens * (Py_ssize_t)sizeof(int64_t));
    PyObject *result = NULL;
    if (!numbers || !starts || !ends || !kinds || !texts || !text_ends)
        goto done;
    int64_t *text_end = (int64_t *)PyBytes_AS_STRING(text_ends);
    const char *unescaped = PyBytes_AS_STRING(texts);
    Tokens out = {(double *)PyByteArray_AS_STRING(numbers), (int64_t *)PyBytes_AS_STRING(starts),
                  (int64_t *)PyBytes_AS_STRING(ends), (unsigned char *)PyBytes_AS_STRING(kinds),
                  PyBytes_AS_STRING(texts), text_end};
    Py_BEGIN_ALLOW_THREADS
    const Labels *table = labels == Py_None ? NULL : (const Labels *)labels;
    count = scan_rows(text, length, rows, per_row, table, out, &quoted);
    if (count == tokens)
        utf8 = texts_are_utf8(unescaped, text_end, quoted);
    Py_END_ALLOW_THREADS
    if (count == -2) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (count != tokens) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    if (!utf8) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    Py_ssize_t written = quoted ? text_end[quoted - 1] : 0;
    if (_PyBytes_Resize(&texts, written) < 0 || _PyBytes_Resize(&text_ends, quoted * (Py_ssize_t)sizeof(int64_t)) < 0)
        goto done;
    result = PyTuple_Pack(6, numbers, starts, ends, kinds, texts, text_ends);
done:
    Py_XDECREF(numbers);
    Py_XDECREF(starts);
    Py_XDECREF(ends);
    Py_XDECREF(kinds);
    Py_XDECREF(texts);
    Py_XDECREF(text_ends);
    return result;
}

/* Tokens a sparse group sends back to Python: the entry, its row, the token's bytes (in
   ``unescaped`` when it is quoted, in the text otherwise) and whether it is quoted. */
typedef struct {
    int64_t *entry, *row, *start, *end, *quoted;
    Py_ssize_t count, capacity;
    char *unescaped;
    Py_ssize_t written;
} Lookups;

static int
lookups_add(Lookups *lookups, int64_t entry, int64_t row, int64_t start, int64_t end, int64_t quoted)
{
    if (lookups->count == lookups->capacity) {
        Py_ssize_t capacity = lookups->capacity * 2 + 256;
        int64_t **fields[5] = {&lookups->entry, &lookups->row, &lookups->start, &lookups->end, &lookups->quoted};
        for (int f = 0; f < 5; f++) {
            int64_t *grown = PyMem_RawRealloc(*fields[f], capacity * sizeof(int64_t));
            if (!grown)
                return -1;
            *fields[f] = grown;
        }
        lookups->capacity = capacity;
    }
    lookups->entry[lookups->count] = entry;
    lookups->row[lookups->count] = row;
    lookups->start[lookups->count] = start;
    lookups->end[lookups->count] = end;
    lookups->quoted[lookups->count] = quoted;
    lookups->count++;
    return 0;
}

#define IS_GAP(c) (gap[(unsigned char)(c)])

enum { SPARSE_DONE, SPARSE_NOT_PLAIN, SPARSE_MARKED, SPARSE_OUT_OF_MEMORY };

/*
 * One value token from text[*at] to the next separator, scanned and (when ``wanted`` and it
 * looks numeric) parsed in the same pass: parse_simple's exact case is computed on the way, anything else
 * it would decline goes to Python's parser.  Sets *looks_numeric (the token starts with one
 * of "0123456789+-." and holds only those and "eE") and, for such a token, *value.  Returns
 * SPARSE_DONE, SPARSE_NOT_PLAIN (a numeric-looking token that is not a whole number) or
 * SPARSE_MARKED (a quote, '%' or "0x", which only the tokenizer reads).
 */
static int
scan_value(const char *text, Py_ssize_t length, Py_ssize_t *at, int wanted, int *looks_numeric, double *value)
{
    Py_ssize_t i = *at, begin = i;
    int numeric = number_start[(unsigned char)text[i]];
    int negative = 0, digits = 0, scale = 0, seen_digit = 0, in_fraction = 0, simple = 1;
    uint64_t mantissa = 0;
    if (text[i] == '+' || text[i] == '-') {
        negative = text[i] == '-';
        i++;
    }
    /* the common case, plain digits, in a loop of its own */
    for (; i < length; i++) {
        unsigned int digit = (unsigned char)text[i] - (unsigned int)'0';
        if (digit > 9)
            break;
        seen_digit = 1;
        if (mantissa || digit) {
            if (++digits > 15)
                simple = 0;
            else
                mantissa = mantissa * 10 + digit;
        }
    }
    for (; i < length; i++) {
        unsigned char c = (unsigned char)text[i];
        if (separator[c])
            break;
        if (c >= '0' && c <= '9') {
            seen_digit = 1;
            if (mantissa || c != '0') {
                if (++digits > 15)
                    simple = 0;
                else
                    mantissa = mantissa * 10 + (uint64_t)(c - '0');
            }
            scale -= in_fraction;
            continue;
        }
        if (c == '.' && !in_fraction) {
            in_fraction = 1;
            continue;
        }
        simple = 0;
        if (needs_tokenizer[c] || ((c == 'x' || c == 'X') && i > begin && text[i - 1] == '0'))
            return SPARSE_MARKED;
        if (!number_char[c])
            numeric = 0;
    }
    *at = i;
    *looks_numeric = numeric;
    if (!numeric || !wanted)
        return SPARSE_DONE;
    if (simple && seen_digit && exact_decimal(mantissa, scale, negative, value))
        return SPARSE_DONE;
    return parse_with_python(text + begin, i - begin, value) ? SPARSE_DONE : SPARSE_NOT_PLAIN;
}

/* parse_sparse_rows's loop, without the GIL (Python's parser, for numbers parse_simple
   declines, takes it): the rows into row_start, index_out and value_out, tokens for
   Python into lookups, the number of entries into *entries.  A quoted value of a nominal
   column that ``labels`` (else NULL) holds is its label's code, found here.  A value parsed
   or found as zero is not stored (a sparse row's zero is no entry); a value left to Python always is. */
static int
sparse_rows_into(const char *text, Py_ssize_t length, Py_ssize_t rows, Py_ssize_t columns,
                 const unsigned char *needs_lookup, const Labels *labels, int64_t *row_start, int64_t *index_out,
                 double *value_out, Lookups *lookups, int64_t *entries)
{
    Py_ssize_t i = 0;
    int64_t entry = 0;
    row_start[0] = 0;
    for (Py_ssize_t row = 0; row < rows; row++) {
        if (i >= length || text[i] != '{')
            return SPARSE_NOT_PLAIN;
        i++;
        int64_t previous = -1;
        for (;;) {
            while (i < length && IS_GAP(text[i]))
                i++;
            if (i >= length || text[i] == '{' || text[i] == '\n')
                return SPARSE_NOT_PLAIN;
            if (text[i] == '}') {
                i++;
                break;
            }
            int64_t index = 0;
            unsigned int digit;
            while (i < length && (digit = (unsigned char)text[i] - (unsigned int)'0') <= 9) {
                index = index * 10 + digit;
                if (index >= columns)
                    return SPARSE_NOT_PLAIN;
                i++;
            }
            if (i < length && !separator[(unsigned char)text[i]])
                return needs_tokenizer[(unsigned char)text[i]] ? SPARSE_MARKED : SPARSE_NOT_PLAIN;
            if (index <= previous)
                return SPARSE_NOT_PLAIN;
            previous = index;
            while (i < length && IS_GAP(text[i]))
                i++;
            if (i >= length || separator[(unsigned char)text[i]])
                return SPARSE_NOT_PLAIN; /* an index without a value */
            if (!needs_lookup[index]) {
                /* the common value, at most 15 digits ended by ',' or '}': scan_value's number,
                   found without its general loop (anything else is left to it) */
                uint64_t whole = 0;
                Py_ssize_t end = i;
                while (end - i < 15 && end < length && (digit = (unsigned char)text[end] - (unsigned int)'0') <= 9) {
                    whole = whole * 10 + digit;
                    end++;
                }
                if (end > i && end < length && (text[end] == ',' || text[end] == '}')) {
                    i = end;
                    if (whole) {
                        index_out[entry] = index;
                        value_out[entry++] = (double)whole;
                    }
                    continue;
                }
            }
            Py_ssize_t begin = i;
            if (text[i] == '\'' || text[i] == '"') {
                Py_ssize_t from = lookups->written;
                if (!scan_quoted(text, length, &i, lookups->unescaped, &lookups->written)
                    || (i < length && !separator[(unsigned char)text[i]]))
                    return SPARSE_MARKED;
                Py_ssize_t label = labels ? labels_find_quoted(labels, index, lookups->unescaped + from,
                                                               lookups->written - from)
                                          : -1;
                if (label >= 0) {
                    lookups->written = from;
                    if (labels->value[label] != 0.0) {
                        index_out[entry] = index;
                        value_out[entry++] = labels->value[label];
                    }
                    continue;
                }
                if (lookups_add(lookups, entry, row, from, lookups->written, 1) < 0)
                    return SPARSE_OUT_OF_MEMORY;
                index_out[entry] = index;
                value_out[entry++] = 0.0;
                continue;
            }
            int looks_numeric;
            double value = 0.0;
            int status = scan_value(text, length, &i, !needs_lookup[index], &looks_numeric, &value);
            if (status != SPARSE_DONE)
                return status;
            if (needs_lookup[index] || !looks_numeric) {
                if (lookups_add(lookups, entry, row, begin, i, 0) < 0)
                    return SPARSE_OUT_OF_MEMORY;
                value = 0.0;
            } else if (value == 0.0) {
                continue;
            }
            index_out[entry] = index;
            value_out[entry] = value;
            entry++;
        }
        if (row < rows - 1) {
            if (i >= length || text[i] != '\n')
                return SPARSE_NOT_PLAIN;
            i++;
        } else if (i != length) {
            return SPARSE_NOT_PLAIN;
        }
        row_start[row + 1] = entry;
    }
    *entries = entry;
    return SPARSE_DONE;
}

/*
 * parse_sparse_rows(data, rows, columns, lookup_columns, labels=None) -> False | None | tuple
 *
 * The reader's common case straight into CSR arrays: ``data`` is ``rows`` stripped lines
 * joined by newlines, each "{index value, index value, ...}" with plain decimal indices
 * below ``columns``, increasing along the row.  A value in a column flagged in
 * ``lookup_columns`` (uint8 per column), or one that does not look numeric, is left for
 * Python (its entry, row and byte range are returned, its value 0 to be filled in), but for a
 * quoted value that ``labels``, the reader's Labels table, holds for its column (its code); other
 * values are parsed as tokenize_plain parses them, and those that are zero are left out
 * (as scipy's eliminate_zeros would).  Returns (indptr, indices, values, lookup entries,
 * rows, starts, ends) as bytearrays (writable, so numpy views them without a copy) of int64
 * (float64 for values); False when the data holds a mark only the tokenizer reads (as
 * tokenize_plain); None for anything else out of the ordinary, which the general path then
 * reads.  The whole scan runs in one pass without the GIL; the arrays are sized for the
 * most entries the bytes can hold (an entry takes at least 4 bytes) and cut to the entries
 * found, so their untouched pages are never used.
 */
static PyObject *
parse_sparse_rows(PyObject *self, PyObject *args)
{
    const char *text;
    Py_ssize_t length, rows, columns;
    Py_buffer lookup_columns;
    PyObject *labels = Py_None;
    if (!PyArg_ParseTuple(args, "y#nny*|O", &text, &length, &rows, &columns, &lookup_columns, &labels))
        return NULL;
    if (labels != Py_None && !PyObject_TypeCheck(labels, &LabelsType)) {
        PyBuffer_Release(&lookup_columns);
        PyErr_SetString(PyExc_TypeError, "parse_sparse_rows: labels is a Labels table or None");
        return NULL;
    }
    PyObject *result = NULL;
    PyObject *indptr = NULL, *indices = NULL, *values = NULL;
    Lookups lookups = {NULL, NULL, NULL, NULL, NULL, 0, 0, PyMem_RawMalloc(length + 1), 0};
    PyObject *strings = PyList_New(0);
    const unsigned char *needs_lookup = lookup_columns.buf;
    if (lookup_columns.len != columns || rows < 1) {
        PyErr_SetString(PyExc_ValueError, "parse_sparse_rows: inconsistent arguments");
        goto done;
    }
    Py_ssize_t most_entries = length / 4 + 1;
    indptr = PyByteArray_FromStringAndSize(NULL, (rows + 1) * (Py_ssize_t)sizeof(int64_t));
    indices = PyByteArray_FromStringAndSize(NULL, most_entries * (Py_ssize_t)sizeof(int64_t));
    values = PyByteArray_FromStringAndSize(NULL, most_entries * (Py_ssize_t)sizeof(double));
    if (!indptr || !indices || !values || !strings || !lookups.unescaped) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    int64_t *row_start = (int64_t *)PyByteArray_AS_STRING(indptr);
    int64_t *index_out = (int64_t *)PyByteArray_AS_STRING(indices);
    double *value_out = (double *)PyByteArray_AS_STRING(values);
    int64_t entry = 0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    const Labels *table = labels == Py_None ? NULL : (const Labels *)labels;
    status = sparse_rows_into(text, length, rows, columns, needs_lookup, table, row_start, index_out, value_out,
                              &lookups, &entry);
    Py_END_ALLOW_THREADS
    if (status == SPARSE_OUT_OF_MEMORY) {
        PyErr_NoMemory();
        goto done;
    }
    if (status == SPARSE_MARKED) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    if (status == SPARSE_NOT_PLAIN) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (PyByteArray_Resize(indices, entry * (Py_ssize_t)sizeof(int64_t)) < 0
        || PyByteArray_Resize(values, entry * (Py_ssize_t)sizeof(double)) < 0)
        goto done;
    for (Py_ssize_t k = 0; k < lookups.count; k++) {
        if (!lookups.quoted[k])
            continue;
        PyObject *string = PyUnicode_DecodeUTF8(lookups.unescaped + lookups.start[k],
                                                lookups.end[k] - lookups.start[k], NULL);
        int failed = !string || PyList_Append(strings, string) < 0;
        Py_XDECREF(string);
        if (failed) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                PyErr_Clear();
                result = Py_NewRef(Py_False);
            }
            goto done;
        }
    }
    /* (y# turns a NULL pointer into None: no lookups are empty bytes) */
    Py_ssize_t lookup_size = lookups.count * (Py_ssize_t)sizeof(int64_t);
    result = Py_BuildValue("(OOOy#y#y#y#y#O)", indptr, indices, values,
                           lookups.count ? (const char *)lookups.entry : "", lookup_size,
                           lookups.count ? (const char *)lookups.row : "", lookup_size,
                           lookups.count ? (const char *)lookups.start : "", lookup_size,
                           lookups.count ? (const char *)lookups.end : "", lookup_size,
                           lookups.count ? (const char *)lookups.quoted : "", lookup_size, strings);
done:
    Py_XDECREF(strings);
    Py_XDECREF(indptr);
    Py_XDECREF(indices);
    Py_XDECREF(values);
    PyMem_RawFree(lookups.entry);
    PyMem_RawFree(lookups.row);
    PyMem_RawFree(lookups.start);
    PyMem_RawFree(lookups.end);
    PyMem_RawFree(lookups.quoted);
    PyMem_RawFree(lookups.unescaped);
    PyBuffer_Release(&lookup_columns);
    return result;
}

/*
 * gather_rows(block, start, rows, size, line_bytes) -> (text, lines, stop, seen, too_long)
 *
 * The reader's line loop for one block of whole lines (each ending with "\n"): from byte
 * ``start``, each line is stripped of separators (blank: the bytes up to the space, and the comma,
 * which Weka reads as white space), a line of nothing else or a '%' comment is skipped (as Weka
 * skips it), and the others are the data rows, gathered into
 * ``text`` joined by "\n" (no "\n" after the last).  It stops after the line that makes
 * ``rows`` rows or at least ``size`` bytes (each row's length plus one), at the end of the
 * block, or before a line longer than ``line_bytes`` (``too_long`` then True).  ``lines``
 * (bytes of int64) holds, per row, how many lines of the block came before it since
 * ``start``; ``stop`` is where the next line starts and ``seen`` the lines passed.  Runs
 * without the GIL: the reading thread's whole per-line work in one call per chunk.
 */
static PyObject *
gather_rows(PyObject *self, PyObject *args)
{
    PyObject *block;
    Py_ssize_t start, rows_wanted, size_wanted, line_bytes;
    if (!PyArg_ParseTuple(args, "O!nnnn", &PyBytes_Type, &block, &start, &rows_wanted, &size_wanted, &line_bytes))
        return NULL;
    const char *text = PyBytes_AS_STRING(block);
    Py_ssize_t length = PyBytes_GET_SIZE(block);
    if (start < 0 || start > length || rows_wanted < 1 || (length && text[length - 1] != '\n')) {
        PyErr_SetString(PyExc_ValueError, "gather_rows: inconsistent arguments");
        return NULL;
    }
    Py_ssize_t most_rows = (length - start) / 2 + 1;
    if (most_rows > rows_wanted)
        most_rows = rows_wanted;
    PyObject *gathered = PyBytes_FromStringAndSize(NULL, length - start);
    PyObject *lines = PyBytes_FromStringAndSize(NULL, most_rows * (Py_ssize_t)sizeof(int64_t));
    if (!gathered || !lines) {
        Py_XDECREF(gathered);
        Py_XDECREF(lines);
        return NULL;
    }
    char *out = PyBytes_AS_STRING(gathered);
    int64_t *line_of = (int64_t *)PyBytes_AS_STRING(lines);
    Py_ssize_t written = 0, rows = 0, size = 0, at = start, seen = 0;
    int too_long = 0;
    Py_BEGIN_ALLOW_THREADS
    while (at < length) {
        const char *end = memchr(text + at, '\n', (size_t)(length - at));
        Py_ssize_t line_end = end - text;
        if (line_end - at > line_bytes) {
            too_long = 1;
            break;
        }
        Py_ssize_t first = at, last = line_end;
        at = line_end + 1;
        seen++;
        while (first < last && blank[(unsigned char)text[first]])
            first++;
        while (last > first && blank[(unsigned char)text[last - 1]])
            last--;
        if (first == last || text[first] == '%')
            continue;
        if (rows)
            out[written++] = '\n';
        memcpy(out + written, text + first, (size_t)(last - first));
        written += last - first;
        line_of[rows++] = seen - 1;
        size += last - first + 1;
        if (rows == rows_wanted || size >= size_wanted)
            break;
    }
    Py_END_ALLOW_THREADS
    if (_PyBytes_Resize(&gathered, written) < 0 || _PyBytes_Resize(&lines, rows * (Py_ssize_t)sizeof(int64_t)) < 0) {
        Py_XDECREF(gathered);
        Py_XDECREF(lines);
        return NULL;
    }
    PyObject *result = Py_BuildValue("(NNnnO)", gathered, lines, at, seen, too_long ? Py_True : Py_False);
    return result;
}

/* decode_texts(texts, text_ends) -> list of str: each text of tokenize_plain's bytes, from the end of the one before
 * (0 for the first) to its own; ValueError for ends out of order or beyond the bytes, or a text that is not UTF-8. */
static PyObject *
decode_texts(PyObject *self, PyObject *args)
{
    Py_buffer texts, ends;
    PyObject *ends_given;
    if (!PyArg_ParseTuple(args, "y*O:decode_texts", &texts, &ends_given))
        return NULL;
    if (PyObject_GetBuffer(ends_given, &ends, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&texts);
        return NULL;
    }
    const char *format = ends.format != NULL ? ends.format : "B";
    int int64 = ends.itemsize == 8 && (strcmp(format, "q") == 0 || (sizeof(long) == 8 && strcmp(format, "l") == 0));
    Py_ssize_t n = ends.len / (Py_ssize_t)sizeof(int64_t);
    PyObject *strings = (int64 || PyBytes_Check(ends_given)) && ends.len % sizeof(int64_t) == 0 ? PyList_New(n) : NULL;
    if (strings == NULL && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "decode_texts: the ends are not int64");
    for (Py_ssize_t k = 0, from = 0; strings != NULL && k < n; k++) {
        int64_t end;
        memcpy(&end, (const char *)ends.buf + k * (Py_ssize_t)sizeof(int64_t), sizeof(end));
        PyObject *string = end < from || end > texts.len
                               ? PyErr_Format(PyExc_ValueError, "decode_texts: text %zd ends out of order", k)
                               : PyUnicode_DecodeUTF8((const char *)texts.buf + from, (Py_ssize_t)end - from, NULL);
        if (string == NULL)
            Py_CLEAR(strings);
        else
            PyList_SET_ITEM(strings, k, string);
        from = (Py_ssize_t)end;
    }
    PyBuffer_Release(&texts);
    PyBuffer_Release(&ends);
    return strings;
}

/* Whether the UTF-8 bytes at bytes[i] (of length bytes) begin a white-space character beyond ASCII, one Python's
 * str.isspace holds: U+0085 and U+00A0 (C2 85, C2 A0), U+1680 (E1 9A 80), U+2000-U+200A, U+2028, U+2029, U+202F
 * (E2 80 80-8A, A8, A9, AF), U+205F (E2 81 9F) and U+3000 (E3 80 80). */
static int
unicode_space_at(const unsigned char *bytes, Py_ssize_t i, Py_ssize_t length)
{
    if (bytes[i] == 0xC2)
        return i + 1 < length && (bytes[i + 1] == 0x85 || bytes[i + 1] == 0xA0);
    if (i + 2 >= length)
        return 0;
    unsigned char second = bytes[i + 1], third = bytes[i + 2];
    switch (bytes[i]) {
    case 0xE1:
        return second == 0x9A && third == 0x80;
    case 0xE2:
        return (second == 0x80 && (third <= 0x8A || third == 0xA8 || third == 0xA9 || third == 0xAF)) ||
               (second == 0x81 && third == 0x9F);
    case 0xE3:
        return second == 0x80 && third == 0x80;
    default:
        return 0;
    }
}

/* Whether ARFF writes a name's UTF-8 bytes bare, as tokens.quote does: not empty, not "?", and no byte below
 * 0x21 (white space, the line end, control characters) nor any of ,{}'"%\ (bytes of other characters are 0x80
 * and above), nor white space beyond ASCII (unicode_space_at), which other readers split on or end a line at. */
static int
written_bare(const unsigned char *bytes, Py_ssize_t length)
{
    if (length == 0 || (length == 1 && bytes[0] == '?'))
        return 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        if (bytes[i] <= ' ' || needs_quoting[bytes[i]] || (bytes[i] >= 0xC2 && unicode_space_at(bytes, i, length)))
            return 0;
    }
    return 1;
}

/* numeric_declarations(names, declared) -> bytes: "@attribute NAME DECLARED\n" for each name of the list, the
 * name quoted and escaped as tokens.quote does (\ ' and the line end, carriage return, tab and % escaped): a wide
 * header's numeric run, one pass over its names (by quote_all and joins, 150,000 names took 0.17 s).  A name that
 * is not UTF-8 (a lone surrogate) raises UnicodeEncodeError, as encoding the header would. */
static PyObject *
numeric_declarations(PyObject *self, PyObject *args)
{
    PyObject *names;
    const char *declared;
    Py_ssize_t declared_length;
    if (!PyArg_ParseTuple(args, "O!s#:numeric_declarations", &PyList_Type, &names, &declared, &declared_length))
        return NULL;
    static const char start[] = "@attribute ";
    Py_ssize_t fixed = (Py_ssize_t)sizeof(start) - 1 + 1 + declared_length + 1, n = PyList_GET_SIZE(names);
    Py_ssize_t allocated = 0, used = 0;
    char *out = NULL;
    PyObject *result = NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *name = PyList_GET_ITEM(names, k), *encoded = NULL;
        if (!PyUnicode_Check(name)) {
            PyErr_Format(PyExc_TypeError, "numeric_declarations: name %zd is not a str", k);
            goto done;
        }
        const char *bytes;
        Py_ssize_t length;
        if (PyUnicode_IS_ASCII(name)) {
            bytes = (const char *)PyUnicode_DATA(name);
            length = PyUnicode_GET_LENGTH(name);
        }
        else { /* a temporary: the name does not keep a UTF-8 copy */
            encoded = PyUnicode_AsUTF8String(name);
            if (encoded == NULL)
                goto done;
            bytes = PyBytes_AS_STRING(encoded);
            length = PyBytes_GET_SIZE(encoded);
        }
        Py_ssize_t needed = used + fixed + 2 * length + 2; /* each byte escaped at most, and two quotes */
        if (needed > allocated) {
            Py_ssize_t grown = allocated ? allocated : 4096;
            while (grown < needed)
                grown *= 2;
            char *larger = PyMem_Realloc(out, (size_t)grown);
            if (larger == NULL) {
                Py_XDECREF(encoded);
                PyErr_NoMemory();
                goto done;
            }
            out = larger;
            allocated = grown;
        }
        memcpy(out + used, start, sizeof(start) - 1);
        used += (Py_ssize_t)sizeof(start) - 1;
        if (written_bare((const unsigned char *)bytes, length)) {
            memcpy(out + used, bytes, (size_t)length);
            used += length;
        }
        else {
            out[used++] = '\'';
            for (Py_ssize_t i = 0; i < length; i++) {
                char escape = quote_escape[(unsigned char)bytes[i]];
                if (escape) {
                    out[used++] = '\\';
                    out[used++] = escape;
                }
                else
                    out[used++] = bytes[i];
            }
            out[used++] = '\'';
        }
        Py_XDECREF(encoded);
        out[used++] = ' ';
        memcpy(out + used, declared, (size_t)declared_length);
        used += declared_length;
        out[used++] = '\n';
    }
    result = PyBytes_FromStringAndSize(out ? out : "", used);
done:
    PyMem_Free(out);
    return result;
}

/* numeric_attributes(cls, names, declared, kind) -> list: per item of ``names`` an instance of ``cls`` made as
 * object.__new__ makes it, with ``name``, ``kind`` and ``declared_type`` (the same item of ``declared``) set as
 * object.__setattr__ sets them, past a frozen dataclass's own __setattr__: Attribute.numerics' objects.  Set so,
 * their fields live in the object, as __init__'s do, with no dictionary made per object.  The items are taken
 * into tuples first: a descriptor's __set__ may run Python code that changes the lists. */
static PyObject *
numeric_attributes(PyObject *self, PyObject *args)
{
    PyTypeObject *cls;
    PyObject *names_given, *declared_given, *kind;
    if (!PyArg_ParseTuple(args, "O!OOO:numeric_attributes", &PyType_Type, &cls, &names_given, &declared_given, &kind))
        return NULL;
    static PyObject *fields[3];
    if (fields[0] == NULL) {
        static const char *spelled[3] = {"name", "kind", "declared_type"};
        for (int k = 0; k < 3; k++)
            if ((fields[k] = PyUnicode_InternFromString(spelled[k])) == NULL)
                return NULL;
    }
    if (cls->tp_new != PyBaseObject_Type.tp_new) {
        PyErr_SetString(PyExc_TypeError, "numeric_attributes: the class is not made by object.__new__");
        return NULL;
    }
    PyObject *names = PySequence_Tuple(names_given), *declared = NULL, *made = NULL, *no_arguments = NULL;
    if (names == NULL || (declared = PySequence_Tuple(declared_given)) == NULL)
        goto failed;
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    if (PyTuple_GET_SIZE(declared) != n) {
        PyErr_SetString(PyExc_ValueError, "numeric_attributes: not one declared type per name");
        goto failed;
    }
    if ((made = PyList_New(n)) == NULL || (no_arguments = PyTuple_New(0)) == NULL)
        goto failed;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *values[3] = {PyTuple_GET_ITEM(names, k), kind, PyTuple_GET_ITEM(declared, k)};
        PyObject *attribute = PyBaseObject_Type.tp_new(cls, no_arguments, NULL);
        if (attribute == NULL)
            goto failed;
        PyList_SET_ITEM(made, k, attribute);
        for (int field = 0; field < 3; field++)
            if (PyObject_GenericSetAttr(attribute, fields[field], values[field]) < 0)
                goto failed;
    }
    Py_DECREF(names);
    Py_DECREF(declared);
    Py_DECREF(no_arguments);
    return made;
failed:
    Py_XDECREF(names);
    Py_XDECREF(declared);
    Py_XDECREF(made);
    Py_XDECREF(no_arguments);
    return NULL;
}

static PyMethodDef methods[] = {
    {"tokenize_plain", tokenize_plain, METH_VARARGS, "Split and parse a plain group of ARFF data rows."},
    {"decode_texts", decode_texts, METH_VARARGS, "The texts of tokenize_plain's bytes and ends, as str."},
    {"parse_sparse_rows", parse_sparse_rows, METH_VARARGS, "Parse plain sparse ARFF rows into CSR arrays."},
    {"gather_rows", gather_rows, METH_VARARGS, "Gather the stripped data rows of a block of lines."},
    {"format_rows", format_rows, METH_VARARGS, "Format rows of numbers and ready texts as ARFF data lines."},
    {"numeric_declarations", numeric_declarations, METH_VARARGS, "A header's numeric attribute lines, names quoted."},
    {"numeric_attributes", numeric_attributes, METH_VARARGS, "Plain numeric attributes made in bulk."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups", NULL, -1, methods};

/* The interface number filterkit/kernels.py (INTERFACES) expects: bump both whenever a function's arguments or
   results change, so that a module built from older source is refused with one error line instead of misbehaving. */
#define INTERFACE 10

PyMODINIT_FUNC
PyInit__speedups(void)
{
    const char *separators = ",{}";
    const char *starts = "0123456789+-.";
    const char *chars = "0123456789+-.eE";
    for (int c = 0; c <= ' '; c++) { /* Weka's white space: every byte up to the space (the line end among them) */
        separator[c] = blank[c] = 1;
        gap[c] = c != '\n';
    }
    for (const char *p = separators; *p; p++)
        separator[(unsigned char)*p] = 1;
    blank[','] = gap[','] = 1;
    for (const char *p = "'\"%"; *p; p++)
        needs_tokenizer[(unsigned char)*p] = 1;
    for (const char *p = starts; *p; p++)
        number_start[(unsigned char)*p] = 1;
    for (const char *p = chars; *p; p++)
        number_char[(unsigned char)*p] = 1;
    for (const char *p = ",{}'\"%\\"; *p; p++)
        needs_quoting[(unsigned char)*p] = 1;
    for (const char *p = "\\\\''\nn\rr\tt%%"; *p; p += 2)
        quote_escape[(unsigned char)p[0]] = p[1];
    if (!labels_ready())
        return NULL;
    PyObject *created = PyModule_Create(&module);
    if (created != NULL && PyModule_AddIntConstant(created, "INTERFACE", INTERFACE) < 0)
        Py_CLEAR(created);
    if (created != NULL && PyModule_AddObjectRef(created, "Labels", (PyObject *)&LabelsType) < 0)
        Py_CLEAR(created);
    return created;
}
