/*
 * Optional compiled tokenizer for the reader's plain groups (filterkit.arff.reader._tokens_of).
 *
 * tokenize_plain(data: bytes) splits a group of plain data rows at spaces, tabs, commas,
 * braces and newlines, exactly as the numpy path does, and parses every numeric-looking
 * token (it starts with one of "0123456789+-." and holds only those and "eE") with Python's
 * own correctly rounded parser.  It returns five bytes objects holding, per token, the
 * float64 value (0 for other tokens), the int64 start and end offsets and line index, and a
 * uint8 "numeric-looking" flag; None when a numeric-looking token is not a whole number
 * (the numpy path then decides); False when the group holds a quote, a '%' or "0x"/"0X",
 * which only the tokenizer reads (the reader checks the same marks without this module).  The pure-Python path is
 * used when this module is not built; tests check that both give identical chunks.
 *
 * format_rows does the writer's inner loop (see its comment); the writer's Python path
 * gives the same text.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static const double exact_powers[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/*
 * Clinger's exact case: a decimal of at most 15 significant digits with a power of ten
 * of at most 22 either way is one correctly rounded multiplication or division of two
 * exactly representable doubles, so it equals the correctly rounded parse.  Returns 0
 * (and leaves the work to Python's parser) for anything else.
 */
static int
parse_simple(const char *text, Py_ssize_t size, double *out)
{
    Py_ssize_t i = 0;
    int negative = 0;
    if (i < size && (text[i] == '+' || text[i] == '-'))
        negative = text[i++] == '-';
    uint64_t mantissa = 0;
    int digits = 0, scale = 0, seen_digit = 0;
    while (i < size && text[i] >= '0' && text[i] <= '9') {
        seen_digit = 1;
        if (mantissa || text[i] != '0') {
            if (++digits > 15)
                return 0;
            mantissa = mantissa * 10 + (uint64_t)(text[i] - '0');
        }
        i++;
    }
    if (i < size && text[i] == '.') {
        i++;
        while (i < size && text[i] >= '0' && text[i] <= '9') {
            seen_digit = 1;
            if (mantissa || text[i] != '0') {
                if (++digits > 15)
                    return 0;
                mantissa = mantissa * 10 + (uint64_t)(text[i] - '0');
            }
            scale--;
            i++;
        }
    }
    if (!seen_digit || i != size)
        return 0; /* an exponent, or not a number: Python's parser decides */
    double value = (double)mantissa;
    if (scale < -22)
        return 0;
    if (scale < 0)
        value /= exact_powers[-scale];
    *out = negative ? -value : value;
    return 1;
}

static unsigned char separator[256];
static unsigned char needs_tokenizer[256];
static unsigned char number_start[256];
static unsigned char number_char[256];

static PyObject *
tokenize_plain(PyObject *self, PyObject *arg)
{
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "tokenize_plain expects bytes");
        return NULL;
    }
    const char *text = PyBytes_AS_STRING(arg);
    Py_ssize_t length = PyBytes_GET_SIZE(arg);

    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)text[i];
        if (needs_tokenizer[c] || ((c == 'x' || c == 'X') && i > 0 && text[i - 1] == '0'))
            Py_RETURN_FALSE;
        if (!separator[c] && (i == 0 || separator[(unsigned char)text[i - 1]]))
            count++;
    }
    PyObject *numbers = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(double));
    PyObject *starts = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    PyObject *ends = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    PyObject *lines = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    PyObject *numeric = PyBytes_FromStringAndSize(NULL, count);
    if (!numbers || !starts || !ends || !lines || !numeric)
        goto fail;
    double *number_out = (double *)PyBytes_AS_STRING(numbers);
    int64_t *start_out = (int64_t *)PyBytes_AS_STRING(starts);
    int64_t *end_out = (int64_t *)PyBytes_AS_STRING(ends);
    int64_t *line_out = (int64_t *)PyBytes_AS_STRING(lines);
    unsigned char *numeric_out = (unsigned char *)PyBytes_AS_STRING(numeric);

    Py_ssize_t token = 0;
    int64_t line = 0;
    Py_ssize_t i = 0;
    while (i < length) {
        unsigned char c = (unsigned char)text[i];
        if (separator[c]) {
            if (c == '\n')
                line++;
            i++;
            continue;
        }
        Py_ssize_t begin = i;
        int looks_numeric = number_start[c];
        while (i < length && !separator[(unsigned char)text[i]]) {
            if (!number_char[(unsigned char)text[i]])
                looks_numeric = 0;
            i++;
        }
        double value = 0.0;
        if (looks_numeric) {
            char *stop = NULL;
            char buffer[64];
            Py_ssize_t size = i - begin;
            const char *source = text + begin;
            /* The token ends at a separator or at the end of the bytes (which is NUL-terminated);
               a copy bounds the parse at the token when it is followed by another character. */
            if (parse_simple(source, size, &value)) {
                /* exact */
            } else if (size < (Py_ssize_t)sizeof(buffer)) {
                memcpy(buffer, source, size);
                buffer[size] = '\0';
                value = PyOS_string_to_double(buffer, &stop, NULL);
                if (value == -1.0 && PyErr_Occurred()) {
                    PyErr_Clear();
                    goto not_plain;
                }
                if (stop != buffer + size)
                    goto not_plain;
            } else {
                goto not_plain;
            }
        }
        number_out[token] = value;
        start_out[token] = begin;
        end_out[token] = i;
        line_out[token] = line;
        numeric_out[token] = (unsigned char)looks_numeric;
        token++;
    }
    return Py_BuildValue("(NNNNN)", numbers, starts, ends, lines, numeric);

not_plain:
    Py_XDECREF(numbers);
    Py_XDECREF(starts);
    Py_XDECREF(ends);
    Py_XDECREF(lines);
    Py_XDECREF(numeric);
    Py_RETURN_NONE;

fail:
    Py_XDECREF(numbers);
    Py_XDECREF(starts);
    Py_XDECREF(ends);
    Py_XDECREF(lines);
    Py_XDECREF(numeric);
    return NULL;
}

typedef struct {
    char *data;
    Py_ssize_t size;
    Py_ssize_t capacity;
} Output;

static int
output_append(Output *out, const char *text, Py_ssize_t size)
{
    if (out->size + size > out->capacity) {
        Py_ssize_t capacity = out->capacity * 2 + size + 1024;
        char *grown = PyMem_Realloc(out->data, capacity);
        if (!grown) {
            PyErr_NoMemory();
            return -1;
        }
        out->data = grown;
        out->capacity = capacity;
    }
    memcpy(out->data + out->size, text, size);
    out->size += size;
    return 0;
}

/* Decimal digits of a signed integer (what "%lld" gives, without snprintf's cost). */
static int
output_integer(Output *out, long long number)
{
    char digits[24];
    int position = (int)sizeof(digits);
    unsigned long long magnitude = number < 0 ? 0ULL - (unsigned long long)number : (unsigned long long)number;
    do {
        digits[--position] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude);
    if (number < 0)
        digits[--position] = '-';
    return output_append(out, digits + position, (Py_ssize_t)sizeof(digits) - position);
}

/* The writer's number format (filterkit.arff.writer.format_numbers): integers below 2**53
   without a decimal point ("-0" for negative zero), "?" for NaN, Java's "Infinity", and
   otherwise Python's repr (the shortest text that reads back to the same double). */
static int
output_number(Output *out, double value)
{
    if (value != value)
        return output_append(out, "?", 1);
    if (value == HUGE_VAL)
        return output_append(out, "Infinity", 8);
    if (value == -HUGE_VAL)
        return output_append(out, "-Infinity", 9);
    if (fabs(value) < 9007199254740992.0 && value == floor(value)) {
        if (value == 0 && signbit(value))
            return output_append(out, "-0", 2);
        return output_integer(out, (long long)value);
    }
    char *text = PyOS_double_to_string(value, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!text)
        return -1;
    int status = output_append(out, text, (Py_ssize_t)strlen(text));
    PyMem_Free(text);
    return status;
}

/*
 * format_rows(indptr, columns, values, special, texts, sparse) -> bytes
 *
 * Row r holds entries indptr[r] .. indptr[r+1]-1 (int64); entry k is column columns[k]
 * (int64) with value values[k] (float64), or, where special[k] (uint8) is set, the next
 * str of ``texts`` (labels, strings and dates, already quoted).  Sparse rows are written
 * "{c v,c v}", dense rows "v,v"; each row ends with a newline.  UTF-8 bytes.
 */
static PyObject *
format_rows(PyObject *self, PyObject *args)
{
    Py_buffer indptr, columns, values, special;
    PyObject *texts;
    int sparse;
    if (!PyArg_ParseTuple(args, "y*y*y*y*O!p", &indptr, &columns, &values, &special, &PyList_Type, &texts, &sparse))
        return NULL;
    PyObject *result = NULL;
    Output out = {NULL, 0, 0};
    const int64_t *bounds = indptr.buf;
    const int64_t *column = columns.buf;
    const double *value = values.buf;
    const unsigned char *is_text = special.buf;
    Py_ssize_t rows = indptr.len / (Py_ssize_t)sizeof(int64_t) - 1;
    Py_ssize_t entries = values.len / (Py_ssize_t)sizeof(double);
    Py_ssize_t next_text = 0;
    if (rows < 0 || (sparse && columns.len / (Py_ssize_t)sizeof(int64_t) != entries) || special.len != entries
        || (rows >= 0 && (bounds[0] != 0 || bounds[rows] != entries))) {
        PyErr_SetString(PyExc_ValueError, "format_rows: inconsistent arrays");
        goto done;
    }
    for (Py_ssize_t r = 0; r < rows; r++) {
        if (sparse && output_append(&out, "{", 1) < 0)
            goto done;
        for (int64_t k = bounds[r]; k < bounds[r + 1]; k++) {
            if (k > bounds[r] && output_append(&out, ",", 1) < 0)
                goto done;
            if (sparse && (output_integer(&out, (long long)column[k]) < 0 || output_append(&out, " ", 1) < 0))
                goto done;
            if (is_text[k]) {
                if (next_text >= PyList_GET_SIZE(texts)) {
                    PyErr_SetString(PyExc_ValueError, "format_rows: too few texts");
                    goto done;
                }
                Py_ssize_t size;
                const char *text = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(texts, next_text++), &size);
                if (!text || output_append(&out, text, size) < 0)
                    goto done;
            } else if (output_number(&out, value[k]) < 0) {
                goto done;
            }
        }
        if (output_append(&out, sparse ? "}\n" : "\n", sparse ? 2 : 1) < 0)
            goto done;
    }
    result = PyBytes_FromStringAndSize(out.data ? out.data : "", out.size);
done:
    PyMem_Free(out.data);
    PyBuffer_Release(&indptr);
    PyBuffer_Release(&columns);
    PyBuffer_Release(&values);
    PyBuffer_Release(&special);
    return result;
}

static PyMethodDef methods[] = {
    {"tokenize_plain", tokenize_plain, METH_O, "Split and parse a plain group of ARFF data rows."},
    {"format_rows", format_rows, METH_VARARGS, "Format rows of numbers and ready texts as ARFF data lines."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    const char *separators = " \t,{}\n";
    const char *starts = "0123456789+-.";
    const char *chars = "0123456789+-.eE";
    for (const char *p = separators; *p; p++)
        separator[(unsigned char)*p] = 1;
    for (const char *p = "'\"%"; *p; p++)
        needs_tokenizer[(unsigned char)*p] = 1;
    for (const char *p = starts; *p; p++)
        number_start[(unsigned char)*p] = 1;
    for (const char *p = chars; *p; p++)
        number_char[(unsigned char)*p] = 1;
    return PyModule_Create(&module);
}
