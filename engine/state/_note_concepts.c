/* checked_concepts and counted_labels: engine/state/note_concepts.py's functions, in C.
 *
 * checked_concepts: the checks a note's concepts need beyond their types (none repeated,
 * no space at either end, every label a concept of the note), and each concept's index, in
 * one pass and with no set made: a set of a note's 29 concepts and its dict lookups were a
 * fifth of the workers' fold of commit messages.
 * counted_labels: the uses of each word written for a concept, by concept, with no pair
 * made of each use (a Counter of (concept, word) pairs was a tenth of that fold).
 *
 * engine/state/note_concepts.py holds the Python of the same functions, which runs where this
 * was not built, and tests/unit/engine/state/test_note_concepts.py holds the two to the same
 * answers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <string.h>

typedef struct {
    Py_hash_t hash;
    PyObject *key; /* borrowed: the note's own concept */
} Slot;

/* Enough for MAX_CONCEPTS (256) at most half full; larger notes take the heap. */
#define ON_STACK 1024

/* Find `key` among the slots: 1 found, 0 not there (*at: the free slot), -1 error. */
static int
find(Slot *slots, size_t mask, PyObject *key, Py_hash_t hash, size_t *at)
{
    size_t i = (size_t)hash & mask;
    for (;;) {
        if (slots[i].key == NULL) {
            *at = i;
            return 0;
        }
        if (slots[i].hash == hash) {
            if (slots[i].key == key) {
                return 1;
            }
            int equal = PyObject_RichCompareBool(slots[i].key, key, Py_EQ);
            if (equal != 0) {
                return equal;
            }
        }
        i = (i + 1) & mask;
    }
}

static int
space_at_an_end(PyObject *text)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    if (length == 0) {
        return 0;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    return Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, 0))
           || Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, length - 1));
}

/* 1 sound, 0 not, -1 error. */
static int
sound(PyObject *concepts, PyObject *labels, Slot *slots, size_t mask)
{
    Py_ssize_t count = PyList_GET_SIZE(concepts);
    size_t at;
    for (Py_ssize_t n = 0; n < count; n++) {
        PyObject *concept = PyList_GET_ITEM(concepts, n);
        if (!PyUnicode_Check(concept)) {
            PyErr_SetString(PyExc_TypeError, "concepts must be str");
            return -1;
        }
        if (space_at_an_end(concept)) {
            return 0;
        }
        Py_hash_t hash = PyObject_Hash(concept);
        if (hash == -1) {
            return -1;
        }
        int found = find(slots, mask, concept, hash, &at);
        if (found != 0) {
            return found < 0 ? -1 : 0; /* repeated */
        }
        slots[at].key = concept;
        slots[at].hash = hash;
    }
    Py_ssize_t position = 0;
    PyObject *key, *value;
    while (PyDict_Next(labels, &position, &key, &value)) {
        Py_hash_t hash = PyObject_Hash(key);
        if (hash == -1) {
            return -1;
        }
        int found = find(slots, mask, key, hash, &at);
        if (found != 1) {
            return found; /* 0: a label of no concept of the note */
        }
    }
    return 1;
}

typedef struct {
    PyObject *array_type; /* array.array */
} ModuleState;

/* Each concept's index in `index` (-1: not there) as an array('i'), which the fold copies
 * into its columns as it is (a list's numbers were converted one at a time), and the
 * places of those not there, as a tuple. */
static PyObject *
looked_up(PyObject *module, PyObject *concepts, PyObject *index)
{
    Py_ssize_t count = PyList_GET_SIZE(concepts), missing = 0;
    int *numbers = PyMem_Malloc((count ? count : 1) * sizeof(int));
    if (numbers == NULL) {
        return PyErr_NoMemory();
    }
    PyObject *indices = NULL, *new = NULL, *result = NULL;
    for (Py_ssize_t n = 0; n < count; n++) {
        PyObject *found = PyDict_GetItemWithError(index, PyList_GET_ITEM(concepts, n));
        if (found == NULL) {
            if (PyErr_Occurred()) {
                goto done;
            }
            numbers[n] = -1;
            missing++;
            continue;
        }
        long number = PyLong_AsLong(found);
        if (number == -1 && PyErr_Occurred()) {
            goto done;
        }
        if (number < 0 || number > INT_MAX) {
            PyErr_SetString(PyExc_OverflowError, "a concept's index is not a C int");
            goto done;
        }
        numbers[n] = (int)number;
    }
    ModuleState *state = PyModule_GetState(module);
    indices = PyObject_CallFunction(
        state->array_type, "Cy#", 'i', (const char *)numbers, count * (Py_ssize_t)sizeof(int));
    new = PyTuple_New(missing);
    if (indices == NULL || new == NULL) {
        goto done;
    }
    for (Py_ssize_t n = 0, at = 0; at < missing; n++) {
        if (numbers[n] == -1) {
            PyObject *place = PyLong_FromSsize_t(n);
            if (place == NULL) {
                goto done;
            }
            PyTuple_SET_ITEM(new, at++, place);
        }
    }
    result = PyTuple_Pack(2, indices, new);
done:
    Py_XDECREF(indices);
    Py_XDECREF(new);
    PyMem_Free(numbers);
    return result;
}

static PyObject *
checked_concepts(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "checked_concepts(concepts, labels, index)");
        return NULL;
    }
    PyObject *concepts = args[0], *labels = args[1], *index = args[2];
    if (!PyList_CheckExact(concepts) || !PyDict_Check(labels) || !PyDict_Check(index)) {
        PyErr_SetString(PyExc_TypeError, "checked_concepts takes a list, a dict and a dict");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(concepts);
    size_t size = 8;
    while (size < 2 * (size_t)count) {
        size <<= 1;
    }
    Slot on_stack[ON_STACK];
    Slot *slots = on_stack;
    if (size > ON_STACK) {
        slots = PyMem_Calloc(size, sizeof(Slot));
        if (slots == NULL) {
            return PyErr_NoMemory();
        }
    }
    else {
        memset(slots, 0, size * sizeof(Slot));
    }
    PyObject *result = NULL;
    int is_sound = sound(concepts, labels, slots, size - 1);
    if (is_sound == 0) {
        result = Py_NewRef(Py_None);
    }
    else if (is_sound == 1) {
        result = looked_up(module, concepts, index);
    }
    if (slots != on_stack) {
        PyMem_Free(slots);
    }
    return result;
}

/* One more use of `word` for `concept`; 0, or -1 on an error. */
static int
count_use(PyObject *counted, PyObject *concept, PyObject *word)
{
    PyObject *words = PyDict_GetItemWithError(counted, concept);
    if (words == NULL) {
        if (PyErr_Occurred()) {
            return -1;
        }
        words = PyDict_New();
        if (words == NULL || PyDict_SetItem(counted, concept, words) < 0) {
            Py_XDECREF(words);
            return -1;
        }
        Py_DECREF(words); /* `counted` holds it */
    }
    PyObject *uses = PyDict_GetItemWithError(words, word);
    if (uses == NULL && PyErr_Occurred()) {
        return -1;
    }
    long before = uses == NULL ? 0 : PyLong_AsLong(uses);
    if (before == -1 && PyErr_Occurred()) {
        return -1;
    }
    PyObject *after = PyLong_FromLong(before + 1);
    if (after == NULL) {
        return -1;
    }
    int failed = PyDict_SetItem(words, word, after);
    Py_DECREF(after);
    return failed;
}

static PyObject *
counted_labels(PyObject *module, PyObject *labels)
{
    if (!PyList_CheckExact(labels)) {
        PyErr_SetString(PyExc_TypeError, "counted_labels takes a list of dicts");
        return NULL;
    }
    PyObject *counted = PyDict_New();
    if (counted == NULL) {
        return NULL;
    }
    for (Py_ssize_t n = 0; n < PyList_GET_SIZE(labels); n++) {
        PyObject *note = PyList_GET_ITEM(labels, n);
        if (!PyDict_Check(note)) {
            PyErr_SetString(PyExc_TypeError, "counted_labels takes a list of dicts");
            Py_DECREF(counted);
            return NULL;
        }
        Py_ssize_t position = 0;
        PyObject *concept, *word;
        while (PyDict_Next(note, &position, &concept, &word)) {
            if (count_use(counted, concept, word) < 0) {
                Py_DECREF(counted);
                return NULL;
            }
        }
    }
    return counted;
}

static PyMethodDef methods[] = {
    {"checked_concepts", (PyCFunction)(void (*)(void))checked_concepts, METH_FASTCALL,
     "checked_concepts(concepts, labels, index): engine/state/note_concepts.py's, in C."},
    {"counted_labels", counted_labels, METH_O,
     "counted_labels(labels): engine/state/note_concepts.py's, in C."},
    {NULL, NULL, 0, NULL},
};

static int
exec_module(PyObject *module)
{
    PyObject *array = PyImport_ImportModule("array");
    if (array == NULL) {
        return -1;
    }
    ModuleState *state = PyModule_GetState(module);
    state->array_type = PyObject_GetAttrString(array, "array");
    Py_DECREF(array);
    return state->array_type == NULL ? -1 : 0;
}

static int
traverse(PyObject *module, visitproc visit, void *arg)
{
    ModuleState *state = PyModule_GetState(module);
    Py_VISIT(state->array_type);
    return 0;
}

static int
clear(PyObject *module)
{
    ModuleState *state = PyModule_GetState(module);
    Py_CLEAR(state->array_type);
    return 0;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_note_concepts",
    .m_size = sizeof(ModuleState),
    .m_methods = methods,
    .m_slots = module_slots,
    .m_traverse = traverse,
    .m_clear = clear,
};

PyMODINIT_FUNC
PyInit__note_concepts(void)
{
    return PyModuleDef_Init(&module);
}
