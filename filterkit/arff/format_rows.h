/*
 * format_rows (format_rows.c), which filterkit/arff/_speedups.c's module offers: see its comment there.
 * Include after Python.h.
 */
#ifndef FILTERKIT_FORMAT_ROWS_H
#define FILTERKIT_FORMAT_ROWS_H

#include <Python.h>

PyObject *format_rows(PyObject *self, PyObject *args);

#endif
