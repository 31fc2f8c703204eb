/* The graph's hot loops, compiled: GraphFields (the slots where a tensor keeps its graph),
 * `record` (each op's output joins the graph), and the loops of the reverse sweep: its
 * topological order and the sending of a gradient through a node's VJPs. The sweep's rules are
 * engine.py's alone: its Python functions say which node the compiled loop may take and take
 * every other (tensor_base.python_record takes the records under anomaly mode). Nothing here knows
 * an array library: a VJP is called, shapes are compared, gradients are added with `+`.
 *
 * Without a C compiler the package installs without this module and the Python functions run
 * (tests run both).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <structmember.h>

static PyObject *s_shape, *s_enabled, *s_dtype, *s_parents;

/* --- GraphFields ------------------------------------------------------------------------- */

/* What every tensor holds for the graph, in slots rather than its instance dict: Tensor's base
 * class. The record writes them and the sweep reads them as struct fields; Python reads them as
 * attributes (member descriptors, as __slots__ are). The fields and their defaults are
 * tensor_base.GRAPH_FIELDS: graph_fields() takes that table and refuses one that names other
 * fields than the slots below (`array` and `backend` have no default: every tensor sets them). */
typedef struct {
    PyObject_HEAD
    PyObject *data, *backend, *grad, *requires_grad, *parents, *vjps, *inputs, *raw, *op, *saved, *hooks, *marks;
} Fields;

#define FIELDS(t) ((Fields *)(t))

static PyObject *empty_tuple, *empty_string;

#define N_FIELDS 12
static PyObject *defaults[N_FIELDS]; /* per member of fields_members, from GRAPH_FIELDS; NULL: none */
static int configured_fields;
static PyMemberDef fields_members[N_FIELDS + 1];

/* The slot of `t` that member `m` describes. */
#define SLOT(t, m) (*(PyObject **)((char *)(t) + (m)->offset))

static void
set_defaults(Fields *t)
{
    for (int i = 0; i < N_FIELDS; i++)
        if (defaults[i] != NULL)
            SLOT(t, &fields_members[i]) = Py_NewRef(defaults[i]);
}

/* A tensor of `type` with the defaults, `array` and `backend` unset (NULL: reading them raises). */
static PyObject *
fields_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *t = type->tp_alloc(type, 0);
    if (t != NULL)
        set_defaults(FIELDS(t));
    return t;
}

#define FIELD(name, member) {name, T_OBJECT_EX, offsetof(Fields, member), 0, NULL}
static PyMemberDef fields_members[N_FIELDS + 1] = {
    FIELD("array", data), FIELD("backend", backend), FIELD("grad", grad), FIELD("requires_grad", requires_grad),
    FIELD("_parents", parents), FIELD("_vjps", vjps), FIELD("_inputs", inputs), FIELD("_raw", raw),
    FIELD("_op", op), FIELD("_saved", saved), FIELD("_hooks", hooks), FIELD("_marks", marks), {NULL},
};

static int
fields_traverse(Fields *t, visitproc visit, void *arg)
{
    for (PyMemberDef *m = fields_members; m->name != NULL; m++)
        Py_VISIT(SLOT(t, m));
    return 0;
}

static int
fields_clear(Fields *t)
{
    for (PyMemberDef *m = fields_members; m->name != NULL; m++)
        Py_CLEAR(SLOT(t, m));
    return 0;
}

static void
fields_dealloc(Fields *t)
{
    PyObject_GC_UnTrack(t);
    fields_clear(t);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

static PyTypeObject FieldsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "autograd_core.graph._sweep.GraphFields",
    .tp_doc = PyDoc_STR("A tensor's array, backend, gradient and graph, in slots (Tensor's base class)."),
    .tp_basicsize = sizeof(Fields),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = fields_new,
    .tp_traverse = (traverseproc)fields_traverse,
    .tp_clear = (inquiry)fields_clear,
    .tp_dealloc = (destructor)fields_dealloc,
    .tp_members = fields_members,
};

PyDoc_STRVAR(graph_fields_doc,
"graph_fields(table) -> type\n\n"
"GraphFields with the fields and defaults of `table` (tensor_base.GRAPH_FIELDS: name -> default),\n"
"which must name every slot but `array` and `backend`, and no other.");

static PyObject *
graph_fields(PyObject *module, PyObject *table)
{
    if (!PyDict_Check(table) || PyDict_GET_SIZE(table) != N_FIELDS - 2) {
        PyErr_SetString(PyExc_TypeError, "graph_fields: the table must be a dict of every graph field but array and backend");
        return NULL;
    }
    for (int i = 0; i < N_FIELDS; i++) {
        const char *name = fields_members[i].name;
        if (strcmp(name, "array") == 0 || strcmp(name, "backend") == 0)
            continue;
        PyObject *value = PyDict_GetItemString(table, name); /* borrowed */
        if (value == NULL) {
            PyErr_Format(PyExc_TypeError, "graph_fields: the table has no default for the slot %s", name);
            return NULL;
        }
        Py_XSETREF(defaults[i], Py_NewRef(value));
    }
    configured_fields = 1;
    return Py_NewRef(&FieldsType);
}

/* --- record ------------------------------------------------------------------------------ */

/* Set once by configure(): tensor.py's Tensor, grad mode's and anomaly mode's state, EPOCH,
 * and the Python record that takes every case but the common one. */
static PyTypeObject *tensor_type;
static PyObject *grad_state, *anomaly_state, *epoch_box, *python_record;

PyDoc_STRVAR(configure_doc, "configure(Tensor, grad_mode_state, anomaly_state, EPOCH, record) -> None");

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *tensor, *grad, *anomaly, *epoch, *fallback;
    if (!PyArg_ParseTuple(args, "O!OOO!O:configure", &PyType_Type, &tensor, &grad, &anomaly, &PyList_Type, &epoch,
                          &fallback))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)tensor, &FieldsType) || !configured_fields) {
        PyErr_SetString(PyExc_TypeError, "configure(): Tensor must derive from graph_fields(NOTHING_SAVED)");
        return NULL;
    }
    Py_INCREF(tensor);
    Py_INCREF(grad);
    Py_INCREF(anomaly);
    Py_INCREF(epoch);
    Py_INCREF(fallback);
    tensor_type = (PyTypeObject *)tensor;
    grad_state = grad;
    anomaly_state = anomaly;
    epoch_box = epoch;
    python_record = fallback;
    Py_RETURN_NONE;
}

static int
is_true_attribute(PyObject *obj, PyObject *name)
{
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL)
        return -1;
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

/* A tuple that holds no object the garbage collector tracks cannot be part of a reference
 * cycle: untracked now, it costs the collector nothing (it would untrack it at its first pass,
 * after counting it). The raw inputs of a numpy op and the saved-values tuple are such. */
static void
untrack_if_acyclic(PyObject *t)
{
    if (!PyTuple_CheckExact(t) || !PyObject_GC_IsTracked(t))
        return;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++)
        if (PyObject_GC_IsTracked(PyTuple_GET_ITEM(t, i)))
            return;
    PyObject_GC_UnTrack(t);
}

/* A new tensor of `data` on `backend`, outside the graph. */
static PyObject *
bare_tensor(PyObject *data, PyObject *backend)
{
    Fields *out = (Fields *)tensor_type->tp_alloc(tensor_type, 0);
    if (out == NULL)
        return NULL;
    set_defaults(out);
    out->data = Py_NewRef(data);
    out->backend = Py_NewRef(backend);
    return (PyObject *)out;
}

/* 1 if `t` is a Tensor that requires grad, 0 if not, -1 on error. */
static int
needs_gradient(PyObject *t)
{
    return PyObject_TypeCheck(t, tensor_type) ? PyObject_IsTrue(FIELDS(t)->requires_grad) : 0;
}

/* The inputs that need a gradient and their VJPs: `inputs` and `vjps` themselves when every
 * input does (new references), lists of those that do otherwise (as zip(inputs, vjps) pairs
 * them), or NULL for both when none does. Returns -1 on error. */
static int
select_parents(PyObject *inputs, PyObject *vjps, PyObject **parents, PyObject **parent_vjps)
{
    *parents = *parent_vjps = NULL;
    PyObject *items = PySequence_Fast(inputs, "record(): inputs must be a sequence");
    if (items == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items), needing = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int needs = needs_gradient(PySequence_Fast_GET_ITEM(items, i));
        if (needs < 0) {
            Py_DECREF(items);
            return -1;
        }
        needing += needs;
    }
    if (needing == n && n > 0) {
        *parents = Py_NewRef(inputs);
        *parent_vjps = Py_NewRef(vjps);
    }
    else if (needing > 0) {
        PyObject *functions = PySequence_Fast(vjps, "record(): vjps must be a sequence");
        *parents = PyList_New(0);
        *parent_vjps = PyList_New(0);
        int failed = functions == NULL || *parents == NULL || *parent_vjps == NULL;
        for (Py_ssize_t i = 0; !failed && i < n; i++) {
            PyObject *t = PySequence_Fast_GET_ITEM(items, i);
            if (needs_gradient(t) <= 0) /* an error was caught above, on the same inputs */
                continue;
            failed = PyList_Append(*parents, t) < 0
                || (i < PySequence_Fast_GET_SIZE(functions)
                    && PyList_Append(*parent_vjps, PySequence_Fast_GET_ITEM(functions, i)) < 0);
        }
        Py_XDECREF(functions);
        if (failed) {
            Py_CLEAR(*parents);
            Py_CLEAR(*parent_vjps);
            Py_DECREF(items);
            return -1;
        }
    }
    Py_DECREF(items);
    return 0;
}

/* tensor.record for every case but anomaly mode (whose creation site the Python function
 * takes): a new reference to the output tensor. */
static PyObject *
record_output(PyObject *op, PyObject *data, PyObject *backend, PyObject *inputs, PyObject *vjps, PyObject *saved,
              PyObject *saves_output, PyObject *raw)
{
    int enabled = is_true_attribute(grad_state, s_enabled);
    if (enabled < 0)
        return NULL;
    PyObject *parents = NULL, *parent_vjps = NULL;
    if (enabled && select_parents(inputs, vjps, &parents, &parent_vjps) < 0)
        return NULL;
    if (parents == NULL)
        return bare_tensor(data, backend);
    PyObject *saved_tuple = PyTuple_Pack(3, saved, saves_output, PyList_GET_ITEM(epoch_box, 0));
    Fields *out = saved_tuple == NULL ? NULL : (Fields *)tensor_type->tp_alloc(tensor_type, 0);
    if (out == NULL) {
        Py_XDECREF(saved_tuple);
        Py_DECREF(parents);
        Py_DECREF(parent_vjps);
        return NULL;
    }
    untrack_if_acyclic(saved_tuple);
    untrack_if_acyclic(raw);
    out->data = Py_NewRef(data);
    out->backend = Py_NewRef(backend);
    out->grad = Py_NewRef(Py_None);
    out->requires_grad = Py_NewRef(Py_True);
    out->parents = parents;
    out->vjps = parent_vjps;
    out->inputs = Py_NewRef(inputs);
    out->raw = Py_NewRef(raw);
    out->op = Py_NewRef(op);
    out->saved = saved_tuple;
    out->hooks = Py_NewRef(Py_None);
    out->marks = Py_NewRef(Py_None);
    return (PyObject *)out;
}

PyDoc_STRVAR(record_doc,
"record(op, data, backend, inputs, vjps, saved=None, saves_output=False, raw_inputs=None) -> Tensor\n\n"
"tensor.record, compiled; under anomaly mode (or with arguments it does not know) it calls the\n"
"Python function.");

static const char *const record_keywords[] = {"op", "data", "backend", "inputs", "vjps", "saved", "saves_output",
                                              "raw_inputs"};
#define RECORD_ARGUMENTS 8

static PyObject *
record(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (tensor_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "autograd_core.graph._sweep.record before configure()");
        return NULL;
    }
    PyObject *given[RECORD_ARGUMENTS] = {NULL, NULL, NULL, NULL, NULL, Py_None, Py_False, Py_None};
    Py_ssize_t n_keywords = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    int known = nargs >= 0 && nargs <= RECORD_ARGUMENTS;
    for (Py_ssize_t i = 0; known && i < nargs; i++)
        given[i] = args[i];
    for (Py_ssize_t k = 0; known && k < n_keywords; k++) {
        Py_ssize_t at = nargs;
        while (at < RECORD_ARGUMENTS && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), record_keywords[at]) != 0)
            at++;
        known = at < RECORD_ARGUMENTS;
        if (known)
            given[at] = args[nargs + k];
    }
    for (int i = 0; known && i < 5; i++)
        known = given[i] != NULL;
    int anomaly = known ? is_true_attribute(anomaly_state, s_enabled) : 1;
    if (anomaly < 0)
        return NULL;
    if (anomaly) /* the Python record takes it (and raises for arguments it does not know) */
        return PyObject_Vectorcall(python_record, args, nargs, kwnames);
    return record_output(given[0], given[1], given[2], given[3], given[4], given[5], given[6], given[7]);
}

/* --- BinaryOp ---------------------------------------------------------------------------- */

/* An elementwise op of two operands (ops.binary_op), as Tensor's operator methods: `a * b` for
 * two tensors on one backend with one dtype, outside anomaly mode, runs here without a Python
 * frame; any other call goes to `function`, the Python op, which is the reference. */
typedef struct {
    PyObject_HEAD
    PyObject *op, *forward, *vjps, *saved, *saves_output, *function;
    vectorcallfunc vectorcall;
} BinaryOp;

/* The op on two tensors of one backend and dtype, outside anomaly mode; or NULL with no error
 * set if it is not that case. */
static PyObject *
binary_common(BinaryOp *self, PyObject *x1, PyObject *x2)
{
    if (!PyObject_TypeCheck(x1, tensor_type) || !PyObject_TypeCheck(x2, tensor_type))
        return NULL;
    PyObject *backend = FIELDS(x1)->backend, *d1 = FIELDS(x1)->data, *d2 = FIELDS(x2)->data;
    if (backend == NULL || backend != FIELDS(x2)->backend || d1 == NULL || d2 == NULL)
        return NULL;
    PyObject *result = NULL, *t1 = NULL, *t2 = NULL, *data = NULL, *inputs = NULL, *raw = NULL;
    if ((t1 = PyObject_GetAttr(d1, s_dtype)) == NULL || (t2 = PyObject_GetAttr(d2, s_dtype)) == NULL)
        goto done;
    int same = PyObject_RichCompareBool(t1, t2, Py_EQ);
    if (same <= 0 || is_true_attribute(anomaly_state, s_enabled) != 0)
        goto done;
    PyObject *operands[2] = {d1, d2};
    if ((data = PyObject_Vectorcall(self->forward, operands, 2, NULL)) == NULL
        || (inputs = PyTuple_Pack(2, x1, x2)) == NULL || (raw = PyTuple_Pack(2, d1, d2)) == NULL)
        goto done;
    result = record_output(self->op, data, backend, inputs, self->vjps, self->saved, self->saves_output, raw);
done:
    Py_XDECREF(t1);
    Py_XDECREF(t2);
    Py_XDECREF(data);
    Py_XDECREF(inputs);
    Py_XDECREF(raw);
    return result;
}

static PyObject *
binary_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    BinaryOp *self = (BinaryOp *)op;
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 2 && tensor_type != NULL) {
        PyObject *out = binary_common(self, args[0], args[1]);
        if (out != NULL || PyErr_Occurred())
            return out;
    }
    return PyObject_Vectorcall(self->function, args, nargsf, kwnames);
}

static PyObject *
binary_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *op, *forward, *vjps, *saved, *saves_output, *function;
    static char *keywords[] = {"op", "forward", "vjps", "saved", "saves_output", "function", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO!OOO:BinaryOp", keywords, &op, &forward, &PyTuple_Type,
                                     &vjps, &saved, &saves_output, &function))
        return NULL;
    BinaryOp *self = (BinaryOp *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    PyObject **fields[] = {&self->op, &self->forward, &self->vjps, &self->saved, &self->saves_output,
                           &self->function};
    PyObject *values[] = {op, forward, vjps, saved, saves_output, function};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        *fields[i] = Py_NewRef(values[i]);
    self->vectorcall = binary_call;
    return (PyObject *)self;
}

static int
binary_traverse(BinaryOp *self, visitproc visit, void *arg)
{
    Py_VISIT(self->op);
    Py_VISIT(self->forward);
    Py_VISIT(self->vjps);
    Py_VISIT(self->saved);
    Py_VISIT(self->saves_output);
    Py_VISIT(self->function);
    return 0;
}

static int
binary_clear(BinaryOp *self)
{
    Py_CLEAR(self->op);
    Py_CLEAR(self->forward);
    Py_CLEAR(self->vjps);
    Py_CLEAR(self->saved);
    Py_CLEAR(self->saves_output);
    Py_CLEAR(self->function);
    return 0;
}

static void
binary_dealloc(BinaryOp *self)
{
    PyObject_GC_UnTrack(self);
    binary_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A method of Tensor, as a Python function is: bound to the instance it is read from. */
static PyObject *
binary_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

/* __name__ and the rest are the Python op's. */
static PyObject *
binary_getattro(PyObject *self, PyObject *name)
{
    PyObject *found = PyObject_GenericGetAttr(self, name);
    if (found != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return found;
    PyErr_Clear();
    return PyObject_GetAttr(((BinaryOp *)self)->function, name);
}

static PyObject *
binary_doc(BinaryOp *self, void *closure)
{
    return PyObject_GetAttrString(self->function, "__doc__");
}

static PyGetSetDef binary_getset[] = {{"__doc__", (getter)binary_doc, NULL, NULL, NULL}, {NULL}};

/* __wrapped__: the Python op, where inspect.signature finds the signature. */
static PyMemberDef binary_members[] = {
    {"__wrapped__", T_OBJECT_EX, offsetof(BinaryOp, function), READONLY, NULL}, {NULL},
};

static PyObject *
binary_repr(BinaryOp *self)
{
    return PyUnicode_FromFormat("<compiled elementwise op %S>", self->op);
}

static PyTypeObject BinaryOpType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "autograd_core.graph._sweep.BinaryOp",
    .tp_doc = PyDoc_STR("BinaryOp(name, forward, vjps, saved, saves_output, function)\n\n"
                        "ops.binary_op's op as a Tensor method: the common case compiled, `function` for the rest."),
    .tp_basicsize = sizeof(BinaryOp),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = binary_new,
    .tp_traverse = (traverseproc)binary_traverse,
    .tp_clear = (inquiry)binary_clear,
    .tp_dealloc = (destructor)binary_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(BinaryOp, vectorcall),
    .tp_descr_get = binary_get,
    .tp_getattro = binary_getattro,
    .tp_repr = (reprfunc)binary_repr,
    .tp_getset = binary_getset,
    .tp_members = binary_members,
};

/* --- topological_order ------------------------------------------------------------------- */

typedef struct {
    PyObject *node;    /* strong */
    PyObject *parents; /* strong: a list or tuple (PySequence_Fast) */
    Py_ssize_t next;   /* the index of the next parent to look at */
} Frame;

static int
push(Frame **stack, Py_ssize_t *depth, Py_ssize_t *capacity, PyObject *node)
{
    if (*depth == *capacity) {
        Py_ssize_t grown = *capacity * 2;
        Frame *bigger = PyMem_Realloc(*stack, grown * sizeof(Frame));
        if (bigger == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        *stack = bigger;
        *capacity = grown;
    }
    PyObject *field = PyObject_GetAttr(node, s_parents);
    PyObject *parents = field == NULL ? NULL : PySequence_Fast(field, "a tensor's _parents must be a sequence");
    Py_XDECREF(field);
    if (parents == NULL)
        return -1;
    Py_INCREF(node);
    (*stack)[*depth] = (Frame){node, parents, 0};
    (*depth)++;
    return 0;
}

/* 1 if `node` was not seen yet (and marks it seen), 0 if it was, -1 on error. */
static int
first_visit(PyObject *visited, PyObject *node)
{
    PyObject *key = PyLong_FromVoidPtr(node);
    if (key == NULL)
        return -1;
    int seen = PySet_Contains(visited, key);
    if (seen == 0 && PySet_Add(visited, key) < 0)
        seen = -1;
    Py_DECREF(key);
    return seen < 0 ? -1 : !seen;
}

PyDoc_STRVAR(topological_order_doc,
"topological_order(roots: list) -> list\n\n"
"engine.topological_order's depth-first search, compiled: the same order.");

static PyObject *
topological_order(PyObject *module, PyObject *roots)
{
    if (!PyList_Check(roots)) {
        PyErr_SetString(PyExc_TypeError, "topological_order expects a list of tensors");
        return NULL;
    }
    Py_ssize_t depth = 0, capacity = 64;
    Frame *stack = PyMem_Malloc(capacity * sizeof(Frame));
    PyObject *order = PyList_New(0), *visited = PySet_New(NULL);
    if (stack == NULL || order == NULL || visited == NULL) {
        if (stack == NULL)
            PyErr_NoMemory();
        goto error;
    }
    for (Py_ssize_t r = 0; r < PyList_GET_SIZE(roots); r++) {
        PyObject *root = PyList_GET_ITEM(roots, r);
        int first = first_visit(visited, root);
        if (first < 0)
            goto error;
        if (!first)
            continue;
        if (push(&stack, &depth, &capacity, root) < 0)
            goto error;
        while (depth) {
            Frame *top = &stack[depth - 1];
            PyObject *descend = NULL;
            while (top->next < PySequence_Fast_GET_SIZE(top->parents)) {
                PyObject *parent = PySequence_Fast_GET_ITEM(top->parents, top->next++);
                int fresh = first_visit(visited, parent);
                if (fresh < 0)
                    goto error;
                if (fresh) {
                    descend = parent;
                    break;
                }
            }
            if (descend != NULL) {
                if (push(&stack, &depth, &capacity, descend) < 0)
                    goto error;
                continue;
            }
            depth--;
            int failed = PyList_Append(order, stack[depth].node);
            Py_DECREF(stack[depth].node);
            Py_DECREF(stack[depth].parents);
            if (failed < 0)
                goto error;
        }
    }
    PyMem_Free(stack);
    Py_DECREF(visited);
    return order;
error:
    while (depth > 0) {
        depth--;
        Py_DECREF(stack[depth].node);
        Py_DECREF(stack[depth].parents);
    }
    PyMem_Free(stack);
    Py_XDECREF(order);
    Py_XDECREF(visited);
    return NULL;
}

/* --- survey ------------------------------------------------------------------------------ */

PyDoc_STRVAR(survey_doc,
"survey(order: list, backend) -> (bool, int)\n\n"
"engine.survey, compiled: whether a node of `order` lives on another backend than `backend`,\n"
"and the union of the nodes' marks.");

static PyObject *
survey(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "survey(order: list, backend)");
        return NULL;
    }
    PyObject *order = args[0], *backend = args[1];
    int elsewhere = 0;
    long marks = 0;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(order); k++) {
        Fields *t = FIELDS(PyList_GET_ITEM(order, k));
        elsewhere |= t->backend != backend;
        if (t->marks != NULL && t->marks != Py_None) {
            long m = PyLong_AsLong(t->marks);
            if (m == -1 && PyErr_Occurred())
                return NULL;
            marks |= m;
        }
    }
    return Py_BuildValue("(Nl)", PyBool_FromLong(elsewhere), marks);
}

/* --- sweep ------------------------------------------------------------------------------- */

/* The loop of engine.run_backward, compiled. It takes only the nodes whose visit would be
 * nothing but their VJPs and the sums (`plain`: no hooks, a recorded graph with its inputs'
 * raw arrays, no version check due, on the sweep's backend) and hands every other node,
 * leaves included, to `visit` (Python), which is the definition of a visit. */
typedef struct {
    PyObject *grads, *handed, *ns, *backend, *epoch_box, *released, *visit, *reduce;
} Sweep;

/* engine._add_gradient: grads[id(node)] = contribution, or the sum with what is there; a
 * first contribution the VJP did not make is `handed` in, a sum is the sweep's own. Steals
 * `contribution`. */
static int
add_gradient(Sweep *s, PyObject *node, PyObject *contribution, int made)
{
    PyObject *key = PyLong_FromVoidPtr(node);
    if (key == NULL) {
        Py_DECREF(contribution);
        return -1;
    }
    PyObject *previous = PyDict_GetItemWithError(s->grads, key); /* borrowed */
    PyObject *total = contribution;
    if (previous != NULL) {
        total = PyNumber_Add(previous, contribution);
        Py_DECREF(contribution);
    }
    int failed = total == NULL || (previous == NULL && PyErr_Occurred() != NULL)
        || PyDict_SetItem(s->grads, key, total) < 0
        || (previous == NULL ? !made && PySet_Add(s->handed, key) < 0 : PySet_Discard(s->handed, key) < 0);
    Py_XDECREF(total);
    Py_DECREF(key);
    return failed ? -1 : 0;
}

/* 1 if the shape of `contribution` differs from that of `parent`'s array, 0 if not, -1 on error. */
static int
broadcast(PyObject *contribution, PyObject *parent)
{
    PyObject *want = PyObject_GetAttr(FIELDS(parent)->data, s_shape);
    PyObject *got = want ? PyObject_GetAttr(contribution, s_shape) : NULL;
    int differ = got ? PyObject_RichCompareBool(got, want, Py_NE) : -1;
    Py_XDECREF(want);
    Py_XDECREF(got);
    return differ;
}

/* Whether visiting `node` is only running its VJPs: the cases engine's visit handles
 * otherwise (hooks, a leaf or a freed graph, a version check due, no raw inputs, another
 * backend) go to it. */
static int
plain(Sweep *s, Fields *t)
{
    if (t->backend != s->backend || t->raw == Py_None || !PyTuple_Check(t->saved) || PyTuple_GET_SIZE(t->saved) != 3)
        return 0;
    if (t->hooks != Py_None && !(PyList_Check(t->hooks) && PyList_GET_SIZE(t->hooks) == 0))
        return 0;
    Py_ssize_t n_vjps = PySequence_Size(t->vjps);
    if (n_vjps <= 0) {
        PyErr_Clear(); /* None: a freed graph */
        return 0;
    }
    return PyObject_RichCompareBool(PyTuple_GET_ITEM(t->saved, 2), PyList_GET_ITEM(s->epoch_box, 0), Py_EQ);
}

/* The loop of engine's visit over `node`'s parents: each VJP on (ns, grad, out, *raw), summed
 * back to a broadcast input's shape by engine._reduce_to_input, added to the parent's
 * gradient (the sweep's own when the VJP made it: none of its arguments). */
static int
send_back(Sweep *s, PyObject *node, PyObject *grad, Fields *t)
{
    PyObject *parents = PySequence_Fast(t->parents, "_parents must be a sequence");
    PyObject *vjps = parents ? PySequence_Fast(t->vjps, "_vjps must be a sequence") : NULL;
    PyObject *raw = vjps ? PySequence_Fast(t->raw, "_raw must be a sequence") : NULL;
    Py_ssize_t n_inputs = raw ? PySequence_Fast_GET_SIZE(raw) : 0;
    PyObject *small[8], **args = n_inputs + 3 <= 8 ? small : PyMem_Malloc((n_inputs + 3) * sizeof(PyObject *));
    int failed = raw == NULL || args == NULL;
    if (args == NULL)
        PyErr_NoMemory();
    Py_ssize_t count = failed ? 0 : Py_MIN(PySequence_Fast_GET_SIZE(parents), PySequence_Fast_GET_SIZE(vjps));
    if (!failed) {
        args[0] = s->ns;
        args[1] = grad;
        args[2] = t->data;
        for (Py_ssize_t i = 0; i < n_inputs; i++)
            args[3 + i] = PySequence_Fast_GET_ITEM(raw, i);
    }
    for (Py_ssize_t i = 0; !failed && i < count; i++) { /* zip(parents, vjps) */
        PyObject *parent = PySequence_Fast_GET_ITEM(parents, i);
        PyObject *contribution = PyObject_Vectorcall(PySequence_Fast_GET_ITEM(vjps, i), args, n_inputs + 3, NULL);
        int made = 1; /* engine's visit: none of the VJP's arguments (grad, out, inputs) */
        for (Py_ssize_t k = 1; k < n_inputs + 3; k++)
            made = made && contribution != args[k];
        int differ = contribution ? broadcast(contribution, parent) : -1;
        if (differ > 0) {
            PyObject *reduced = PyObject_CallFunctionObjArgs(s->reduce, s->ns, contribution, parent, node, NULL);
            Py_SETREF(contribution, reduced);
            made = 1;
        }
        if (differ < 0 || contribution == NULL) {
            Py_XDECREF(contribution);
            failed = 1;
        }
        else
            failed = add_gradient(s, parent, contribution, made) < 0;
    }
    if (args != small && args != NULL)
        PyMem_Free(args);
    Py_XDECREF(parents);
    Py_XDECREF(vjps);
    Py_XDECREF(raw);
    return failed ? -1 : 0;
}

/* engine._release: the node's _parents, _vjps, _inputs, _raw and _saved become engine.RELEASED's. */
static void
release(Sweep *s, Fields *t)
{
    PyObject **fields[] = {&t->parents, &t->vjps, &t->inputs, &t->raw, &t->saved};
    for (Py_ssize_t i = 0; i < 5; i++)
        Py_SETREF(*fields[i], Py_NewRef(PyTuple_GET_ITEM(s->released, i)));
}

/* Visits `node` with `grad` (borrowed). */
static int
visit_node(Sweep *s, PyObject *node, PyObject *grad)
{
    Fields *t = FIELDS(node);
    int is_plain = plain(s, t);
    if (is_plain < 0)
        return -1;
    if (!is_plain) {
        PyObject *r = PyObject_CallFunctionObjArgs(s->visit, node, grad, NULL);
        Py_XDECREF(r);
        return r == NULL ? -1 : 0;
    }
    if (send_back(s, node, grad, t) < 0)
        return -1;
    if (s->released != Py_None)
        release(s, t);
    return 0;
}

PyDoc_STRVAR(sweep_doc,
"sweep(order, grads, handed, ns, backend, epoch, released, visit, reduce) -> None\n\n"
"engine.run_backward's loop, compiled: visits the nodes of `order` from the last to the first,\n"
"each that has a gradient in `grads` (keyed by id, popped as it is visited). `released` is\n"
"engine.RELEASED, or None to keep the graph.");

static PyObject *
sweep(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9 || !PyList_Check(args[0]) || !PyDict_Check(args[1]) || !PySet_Check(args[2])
        || !PyList_Check(args[5]) || PyList_GET_SIZE(args[5]) != 1
        || !(args[6] == Py_None || (PyTuple_Check(args[6]) && PyTuple_GET_SIZE(args[6]) == 5))) {
        PyErr_SetString(PyExc_TypeError, "sweep(order: list, grads: dict, handed: set, ns, backend, epoch: [int], "
                                         "released: tuple of 5 or None, visit, reduce)");
        return NULL;
    }
    Sweep s = {args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8]};
    PyObject *order = args[0];
    Py_INCREF(order);
    for (Py_ssize_t k = PyList_GET_SIZE(order) - 1; k >= 0; k--) {
        PyObject *node = PyList_GET_ITEM(order, k);
        PyObject *key = PyLong_FromVoidPtr(node);
        if (key == NULL)
            goto error;
        PyObject *grad = PyDict_GetItemWithError(s.grads, key);
        if (grad == NULL) {
            Py_DECREF(key);
            if (PyErr_Occurred())
                goto error;
            continue;
        }
        Py_INCREF(grad); /* the loop's reference: the dict's goes now, as the Python loop pops it */
        int failed = PyDict_DelItem(s.grads, key) < 0 || visit_node(&s, node, grad) < 0;
        Py_DECREF(grad);
        Py_DECREF(key);
        if (failed)
            goto error;
    }
    Py_DECREF(order);
    Py_RETURN_NONE;
error:
    Py_DECREF(order);
    return NULL;
}

static PyMethodDef methods[] = {
    {"graph_fields", (PyCFunction)graph_fields, METH_O, graph_fields_doc},
    {"configure", (PyCFunction)configure, METH_VARARGS, configure_doc},
    {"survey", (PyCFunction)(void (*)(void))survey, METH_FASTCALL, survey_doc},
    {"record", (PyCFunction)(void (*)(void))record, METH_FASTCALL | METH_KEYWORDS, record_doc},
    {"topological_order", (PyCFunction)topological_order, METH_O, topological_order_doc},
    {"sweep", (PyCFunction)(void (*)(void))sweep, METH_FASTCALL, sweep_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "autograd_core.graph._sweep",
    "The reverse sweep's loops, compiled (see engine.py for the Python reference).", -1, methods,
};

PyMODINIT_FUNC
PyInit__sweep(void)
{
    struct {
        PyObject **name;
        const char *text;
    } names[] = {
        {&s_shape, "shape"}, {&s_enabled, "enabled"}, {&s_dtype, "dtype"}, {&s_parents, "_parents"},
        {&empty_string, ""},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if ((*names[i].name = PyUnicode_InternFromString(names[i].text)) == NULL)
            return NULL;
    if ((empty_tuple = PyTuple_New(0)) == NULL || PyType_Ready(&FieldsType) < 0 || PyType_Ready(&BinaryOpType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddObjectRef(m, "BinaryOp", (PyObject *)&BinaryOpType) < 0)
        Py_CLEAR(m);
    return m;
}
