/*
 * Labels (labels.c), the nominal columns' labels for the compiled reader's lookups and the compiled
 * writer's texts; part of filterkit.arff._speedups.  Include after Python.h.
 */
#ifndef FILTERKIT_LABELS_H
#define FILTERKIT_LABELS_H

#include <Python.h>
#include <stdint.h>

/* Label k is column[k]'s text text[start[k]:start[k + 1]] with value[k]; slots is a hash table of them by
   (column, text), label + 1 in a slot and 0 where empty; a column c's labels run from first[c] (-1 for
   none) for count[c] labels; longest is the most bytes a label takes.  Nothing changes once made, so any
   thread reads it without the GIL. */
typedef struct {
    PyObject_HEAD
    Py_ssize_t n, n_columns, mask, longest;
    int64_t *column;
    double *value;
    Py_ssize_t *start;
    char *text;
    uint64_t *hash;
    Py_ssize_t *slots;
    Py_ssize_t *first, *count;
} Labels;

extern PyTypeObject LabelsType;

/* The label of column ``column`` that a quoted value's unescaped text ``text`` is, -1 when there is none: for a
   column without labels, and for "?", which quoted is a label's text and not the missing value the reader's table
   maps it to (the caller leaves such a value to Python).  Reads the table only: needs no GIL. */
Py_ssize_t labels_find_quoted(const Labels *self, int64_t column, const char *text, Py_ssize_t length);

/* Draws the table's hash key and readies the type: 0 with an exception set when it fails. */
int labels_ready(void);

#endif
