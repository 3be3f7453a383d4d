/* cap_lifts: engine/recall/dominance.py's cap on what links add to a score, in C.
 *
 * Each read caps its candidates' scores twice, and in numpy the cap is dozens of calls on
 * small arrays (bench/README.md has what that costs). Here it is one walk down the lifted
 * memories in order of their direct scores, keeping, per set of query concepts a memory
 * that may keep its place carries, the lowest direct score of those at or above.
 *
 * engine/recall/dominance.py holds the numpy of the same cap, which runs where this was
 * not built, and tests/unit/engine/recall/test_dominance.py holds both to the rule in
 * words.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double lacked;
    double share; /* of what it lacks, how much a memory above may lack */
    int rated, carries_none;
} Lifted;

/* A lifted memory: its direct score, its row, and what it lacks of the question. */
typedef struct {
    double direct;
    Py_ssize_t row;
    Lifted it;
} Ranked;

/* A set of query concepts some memory that may keep its place carries. */
typedef struct {
    const uint8_t *code; /* its row of the packed `carries` */
    double own_lack;     /* the question's weight it lacks */
    double lowest;       /* the lowest direct score of its memories walked past so far */
} Kind;

typedef struct {
    Py_ssize_t width;     /* bytes of a packed row */
    const double *tables; /* per byte of a row and value of it, the weight of its concepts */
} Weigher;

static double
weight(const Weigher *w, const uint8_t *code, const uint8_t *without)
{
    double sum = 0.0;
    for (Py_ssize_t t = 0; t < w->width; t++) {
        uint8_t bits = without ? (uint8_t)(code[t] & ~without[t]) : code[t];
        sum += w->tables[t * 256 + bits];
    }
    return sum;
}

static double
lack(const Weigher *w, const uint8_t *code)
{
    double sum = 0.0;
    for (Py_ssize_t t = 0; t < w->width; t++) {
        sum += w->tables[t * 256 + (uint8_t)~code[t]];
    }
    return sum;
}

/* The weight of the lightest query concept `code` lacks (0 if it lacks none). */
static double
lightest(const Weigher *w, const uint8_t *code, Py_ssize_t concepts)
{
    double least = INFINITY;
    for (Py_ssize_t c = 0; c < concepts; c++) {
        if (!(code[c >> 3] >> (c & 7) & 1)) {
            uint8_t bit = (uint8_t)(1u << (c & 7));
            least = fmin(least, w->tables[(c >> 3) * 256 + bit]);
        }
    }
    return isfinite(least) ? least : 0.0;
}

static int
by_direct_descending(const void *a, const void *b)
{
    double x = ((const Ranked *)a)->direct, y = ((const Ranked *)b)->direct;
    return (x < y) - (x > y);
}

static uint64_t
hashed(const uint8_t *code, Py_ssize_t width)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (Py_ssize_t t = 0; t < width; t++) {
        h = (h ^ code[t]) * 1099511628211ULL;
    }
    return h;
}

/* Whether `upper` carries every concept `lower` carries, and more. */
static int
nests(const uint8_t *upper, const uint8_t *lower, Py_ssize_t width)
{
    int more = 0;
    for (Py_ssize_t t = 0; t < width; t++) {
        if (lower[t] & ~upper[t]) {
            return 0;
        }
        more |= (upper[t] & ~lower[t]) != 0;
    }
    return more;
}

static int
keeps_place(const Weigher *w, const Kind *kind, const uint8_t *code, const Lifted *lifted,
            double epsilon)
{
    if (lifted->rated) {
        return lifted->carries_none || lifted->lacked / 2 - kind->own_lack > epsilon;
    }
    if (!lifted->carries_none && nests(kind->code, code, w->width)) {
        return 1;
    }
    return weight(w, kind->code, code) - lifted->lacked / 2 > epsilon
           && lifted->share * lifted->lacked - kind->own_lack > epsilon;
}

static void
describe(const Weigher *w, const uint8_t *code, int rated, double lacks_at_most, Lifted *out)
{
    out->lacked = lack(w, code);
    out->rated = rated;
    out->share = rated ? 0.5 : lacks_at_most;
    out->carries_none = 1;
    for (Py_ssize_t t = 0; t < w->width; t++) {
        if (code[t]) {
            out->carries_none = 0;
            break;
        }
    }
}

/* Per memory, its row of `carries` (one byte a query concept) as bits: a byte holds eight. */
static void
pack(const uint8_t *carries, Py_ssize_t n, Py_ssize_t concepts, Py_ssize_t width,
     uint8_t *packed)
{
    memset(packed, 0, n * width);
    for (Py_ssize_t i = 0; i < n; i++) {
        const uint8_t *row = carries + i * concepts;
        uint8_t *code = packed + i * width;
        for (Py_ssize_t c = 0; c < concepts; c++) {
            code[c >> 3] |= (uint8_t)((row[c] != 0) << (c & 7));
        }
    }
}

/* Of the lifted memories in order of their direct scores, highest first, the first whose
 * direct score is at most `score`: those from it on have this memory at or above them. */
static Py_ssize_t
first_at_most(const Ranked *lifted, Py_ssize_t count, double score)
{
    Py_ssize_t low = 0, high = count;
    while (low < high) {
        Py_ssize_t middle = low + (high - low) / 2;
        if (lifted[middle].direct <= score) {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    return low;
}

/* 0 done, -1 out of memory. */
static int
cap(double *out, const double *direct, const uint8_t *carries, Py_ssize_t concepts,
    const uint8_t *rated, Py_ssize_t n, const double *tables, double floor,
    double lacks_at_most, double margin, double epsilon)
{
    Py_ssize_t width = (concepts + 7) / 8;
    Weigher w = {width, tables};
    Ranked *linked = NULL;
    Py_ssize_t *pool = NULL, *starts = NULL, *slots = NULL;
    uint8_t *packed = NULL;
    Kind *kinds = NULL;
    int status = -1;

    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        count += out[i] > direct[i] && out[i] >= floor;
    }
    if (count == 0) {
        return 0;
    }
    linked = PyMem_Malloc(count * sizeof(Ranked));
    packed = PyMem_Malloc(n * width);
    if (linked == NULL || packed == NULL) {
        goto done;
    }
    pack(carries, n, concepts, width, packed);
    /* one that carries no more than `least` keeps its place above none of them */
    double least = INFINITY;
    Py_ssize_t l = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!(out[i] > direct[i] && out[i] >= floor)) {
            continue;
        }
        Ranked *lifted = &linked[l++];
        *lifted = (Ranked){.direct = direct[i], .row = i};
        describe(&w, packed + i * width, rated && rated[i], lacks_at_most, &lifted->it);
        Lifted it = lifted->it;
        double needs = it.rated && it.carries_none
                           ? 0.0
                           : fmax(it.lacked / 2, 1.0 - it.share * it.lacked);
        if (!it.rated && !it.carries_none) {
            /* or carries all it carries and more: at least its lightest lack more */
            needs = fmin(needs, 1.0 - it.lacked + lightest(&w, packed + i * width, concepts) / 2);
        }
        least = fmin(least, needs);
    }
    qsort(linked, count, sizeof(Ranked), by_direct_descending);

    /* The memories that may keep their place, each under the first lifted one it is at or
     * above (a counting sort: their order among themselves does not matter) */
    pool = PyMem_Malloc(n * sizeof(Py_ssize_t));
    starts = PyMem_Calloc(count + 1, sizeof(Py_ssize_t));
    if (pool == NULL || starts == NULL) {
        goto done;
    }
    double lowest = linked[count - 1].direct;
    Py_ssize_t size = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        if (direct[j] >= lowest && weight(&w, packed + j * width, NULL) - least > epsilon) {
            pool[size++] = j;
            starts[first_at_most(linked, count, direct[j]) + 1]++;
        }
    }
    if (size == 0) {
        status = 0;
        goto done;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        starts[k + 1] += starts[k];
    }
    Py_ssize_t *order = PyMem_Malloc(size * sizeof(Py_ssize_t));
    if (order == NULL) {
        goto done;
    }
    for (Py_ssize_t p = 0; p < size; p++) {
        Py_ssize_t j = pool[p];
        order[starts[first_at_most(linked, count, direct[j])]++] = j;
    }
    PyMem_Free(pool);
    pool = order; /* by lifted memory; starts[k] is now where the next one's begin */

    Py_ssize_t capacity = 1;
    while (capacity < 2 * size) {
        capacity <<= 1;
    }
    kinds = PyMem_Malloc(size * sizeof(Kind));
    slots = PyMem_Malloc(capacity * sizeof(Py_ssize_t));
    if (kinds == NULL || slots == NULL) {
        goto done;
    }
    memset(slots, 0xff, capacity * sizeof(Py_ssize_t)); /* -1: empty */
    Py_ssize_t known = 0, walked = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        /* every memory at or above this one's direct score, each under its set of concepts */
        for (; walked < starts[k]; walked++) {
            const uint8_t *code = packed + pool[walked] * width;
            size_t at = (size_t)hashed(code, width) & (size_t)(capacity - 1);
            while (slots[at] >= 0 && memcmp(kinds[slots[at]].code, code, width) != 0) {
                at = (at + 1) & (size_t)(capacity - 1);
            }
            if (slots[at] < 0) {
                slots[at] = known;
                kinds[known++] = (Kind){code, lack(&w, code), INFINITY};
            }
            kinds[slots[at]].lowest = fmin(kinds[slots[at]].lowest, direct[pool[walked]]);
        }
        Py_ssize_t i = linked[k].row;
        const Lifted *it = &linked[k].it;
        const uint8_t *code = packed + i * width;
        double ceiling = INFINITY;
        for (Py_ssize_t s = 0; s < known; s++) {
            if (kinds[s].lowest < ceiling && keeps_place(&w, &kinds[s], code, it, epsilon)) {
                ceiling = kinds[s].lowest;
            }
        }
        out[i] = fmin(out[i], fmax(direct[i], ceiling - margin));
    }
    status = 0;
done:
    PyMem_Free(linked);
    PyMem_Free(packed);
    PyMem_Free(pool);
    PyMem_Free(starts);
    PyMem_Free(kinds);
    PyMem_Free(slots);
    return status;
}

static PyObject *
cap_lifts(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer out, direct, carries, weights, rated = {0};
    PyObject *rated_or_none;
    double floor, lacks_at_most, margin, epsilon;
    if (!PyArg_ParseTuple(args, "w*y*y*Oy*dddd:cap_lifts", &out, &direct, &carries,
                          &rated_or_none, &weights, &floor, &lacks_at_most, &margin, &epsilon)) {
        return NULL;
    }
    PyObject *result = NULL;
    double *tables = NULL;
    int has_rated = rated_or_none != Py_None;
    if (has_rated && PyObject_GetBuffer(rated_or_none, &rated, PyBUF_SIMPLE) < 0) {
        goto done;
    }
    Py_ssize_t n = out.len / (Py_ssize_t)sizeof(double);
    Py_ssize_t concepts = weights.len / (Py_ssize_t)sizeof(double);
    Py_ssize_t width = (concepts + 7) / 8;
    if (direct.len != out.len || carries.len != n * concepts || (has_rated && rated.len != n)) {
        PyErr_SetString(PyExc_ValueError,
                        "cap_lifts: out, direct, carries (a byte per memory and concept), "
                        "rated and weights disagree in size");
        goto done;
    }
    tables = PyMem_Malloc(width * 256 * sizeof(double));
    if (tables == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const double *w = weights.buf;
    for (Py_ssize_t t = 0; t < width; t++) {
        double *table = tables + t * 256;
        table[0] = 0.0;
        for (int v = 1; v < 256; v++) {
            int low = 0;
            while (!(v >> low & 1)) {
                low++;
            }
            Py_ssize_t concept = 8 * t + low;
            table[v] = table[v & (v - 1)] + (concept < concepts ? w[concept] : 0.0);
        }
    }
    if (cap(out.buf, direct.buf, carries.buf, concepts, has_rated ? rated.buf : NULL, n, tables,
            floor, lacks_at_most, margin, epsilon) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(tables);
    PyBuffer_Release(&out);
    PyBuffer_Release(&direct);
    PyBuffer_Release(&carries);
    PyBuffer_Release(&weights);
    if (has_rated && rated.obj != NULL) {
        PyBuffer_Release(&rated);
    }
    return result;
}

static PyMethodDef methods[] = {
    {"cap_lifts", cap_lifts, METH_VARARGS,
     "cap_lifts(out, direct, carries, rated, weights, floor, lacks_at_most, margin, epsilon): "
     "engine/recall/dominance.py's bounded, in place on `out` (float64, the full scores on "
     "entry); `carries` and `rated` (or None) are C-ordered bool arrays."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_dominance",
    .m_size = 0,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__dominance(void)
{
    return PyModuleDef_Init(&module);
}
