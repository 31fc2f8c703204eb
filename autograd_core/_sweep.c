/* The graph's hot loops, compiled: `record` (each op's output joins the graph), and the
 * reverse sweep's topological order and visit of each node that needs nothing but its VJPs
 * (no hooks, no version check due, its inputs' raw arrays kept), which is nearly every node of
 * a first-order backward. Anything else goes to the Python functions that are the reference:
 * tensor.record for the unusual records, engine's `visit` for the unusual nodes,
 * engine._accumulate for leaves. Nothing here knows an array library: a VJP is called, shapes
 * are compared, gradients are added with `+`.
 *
 * Without a C compiler the package installs without this module and the Python functions run
 * (tests run both).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

static PyObject *s_parents, *s_vjps, *s_hooks, *s_saved, *s_backend, *s_data, *s_raw, *s_shape, *s_inputs,
    *s_enabled, *s_requires_grad, *s_op, *s_dtype;

/* --- record ------------------------------------------------------------------------------ */

/* Set once by configure(): tensor.py's Tensor, grad mode's and anomaly mode's state, EPOCH,
 * and the Python record that takes every case but the common one. */
static PyTypeObject *tensor_type;
static PyObject *grad_state, *anomaly_state, *epoch_box, *python_record, *empty_tuple;

PyDoc_STRVAR(configure_doc, "configure(Tensor, grad_mode_state, anomaly_state, EPOCH, record) -> None");

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *tensor, *grad, *anomaly, *epoch, *fallback;
    if (!PyArg_ParseTuple(args, "O!OOO!O:configure", &PyType_Type, &tensor, &grad, &anomaly, &PyList_Type, &epoch,
                          &fallback))
        return NULL;
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

/* 1 if every input is a Tensor that requires grad and anomaly mode is off, 0 if not, -1 on error. */
static int
common_record(PyObject *inputs)
{
    int anomaly = is_true_attribute(anomaly_state, s_enabled);
    if (anomaly != 0)
        return anomaly < 0 ? -1 : 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); i++) {
        PyObject *t = PyTuple_GET_ITEM(inputs, i);
        if (!PyObject_TypeCheck(t, tensor_type))
            return 0;
        int requires = is_true_attribute(t, s_requires_grad);
        if (requires <= 0)
            return requires;
    }
    return 1;
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

/* `out`, an op's output, joins the graph: tensor.record's common case, its inputs already
 * checked. Returns a new reference. */
static PyObject *
new_tensor(PyObject *op, PyObject *data, PyObject *backend, PyObject *inputs, PyObject *vjps, PyObject *saved,
           PyObject *saves_output, PyObject *raw, int enabled)
{
    PyObject *out = PyBaseObject_Type.tp_new(tensor_type, empty_tuple, NULL); /* object.__new__(Tensor) */
    if (out == NULL)
        return NULL;
    if (PyObject_SetAttr(out, s_data, data) < 0 || PyObject_SetAttr(out, s_backend, backend) < 0)
        goto error;
    if (!enabled)
        return out;
    PyObject *saved_tuple = PyTuple_Pack(3, saved, saves_output, PyList_GET_ITEM(epoch_box, 0));
    int failed = saved_tuple == NULL
        || PyObject_SetAttr(out, s_requires_grad, Py_True) < 0 || PyObject_SetAttr(out, s_parents, inputs) < 0
        || PyObject_SetAttr(out, s_vjps, vjps) < 0 || PyObject_SetAttr(out, s_op, op) < 0
        || PyObject_SetAttr(out, s_inputs, inputs) < 0 || PyObject_SetAttr(out, s_raw, raw) < 0
        || PyObject_SetAttr(out, s_saved, saved_tuple) < 0;
    if (!failed) {
        untrack_if_acyclic(saved_tuple);
        untrack_if_acyclic(raw);
    }
    Py_XDECREF(saved_tuple);
    if (failed)
        goto error;
    return out;
error:
    Py_DECREF(out);
    return NULL;
}

/* Grad mode's state: 1 if on, 0 if off; and then 1 if `inputs` are the common case, 0 if the
 * Python record must take them; -1 on error. */
static int
recordable(PyObject *inputs, int *enabled)
{
    *enabled = is_true_attribute(grad_state, s_enabled);
    if (*enabled <= 0)
        return *enabled < 0 ? -1 : 1;
    return common_record(inputs);
}

PyDoc_STRVAR(record_doc,
"record(op, data, backend, inputs, vjps, saved=None, saves_output=False, raw_inputs=None) -> Tensor\n\n"
"tensor.record, compiled for its common case (grad mode on, every input a tensor that requires\n"
"grad, anomaly mode off); any other case calls the Python function.");

static PyObject *
record(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (tensor_type == NULL || kwnames != NULL || nargs < 5 || nargs > 8 || !PyTuple_Check(args[3])) {
        if (python_record == NULL) {
            PyErr_SetString(PyExc_RuntimeError, "autograd_core._sweep.record before configure()");
            return NULL;
        }
        return PyObject_Vectorcall(python_record, args, nargs, kwnames);
    }
    int enabled, common = recordable(args[3], &enabled);
    if (common < 0)
        return NULL;
    if (!common)
        return PyObject_Vectorcall(python_record, args, nargs, NULL);
    return new_tensor(args[0], args[1], args[2], args[3], args[4], nargs > 5 ? args[5] : Py_None,
                      nargs > 6 ? args[6] : Py_False, nargs > 7 ? args[7] : Py_None, enabled);
}

/* --- BinaryOp ---------------------------------------------------------------------------- */

/* An elementwise op of two operands (ops.binary_op), as Tensor's operator methods: `a * b` for
 * two tensors on one backend with one dtype and the common record runs here, without a Python
 * frame; any other call goes to `function`, the Python op, which is the reference. */
typedef struct {
    PyObject_HEAD
    PyObject *name, *forward, *vjps, *saved, *saves_output, *function;
    vectorcallfunc vectorcall;
} BinaryOp;

/* The op on two tensors in the common case, or NULL with no error set if it is not one. */
static PyObject *
binary_common(BinaryOp *self, PyObject *x1, PyObject *x2)
{
    PyObject *result = NULL, *b1 = NULL, *b2 = NULL, *d1 = NULL, *d2 = NULL, *t1 = NULL, *t2 = NULL, *data = NULL,
             *inputs = NULL, *raw = NULL;
    if (!PyObject_TypeCheck(x1, tensor_type) || !PyObject_TypeCheck(x2, tensor_type))
        return NULL;
    if ((b1 = PyObject_GetAttr(x1, s_backend)) == NULL || (b2 = PyObject_GetAttr(x2, s_backend)) == NULL
        || b1 != b2)
        goto done;
    if ((d1 = PyObject_GetAttr(x1, s_data)) == NULL || (d2 = PyObject_GetAttr(x2, s_data)) == NULL
        || (t1 = PyObject_GetAttr(d1, s_dtype)) == NULL || (t2 = PyObject_GetAttr(d2, s_dtype)) == NULL)
        goto done;
    int same = PyObject_RichCompareBool(t1, t2, Py_EQ);
    if (same <= 0 || (inputs = PyTuple_Pack(2, x1, x2)) == NULL)
        goto done;
    int enabled, common = recordable(inputs, &enabled);
    if (common <= 0)
        goto done;
    PyObject *operands[2] = {d1, d2};
    if ((data = PyObject_Vectorcall(self->forward, operands, 2, NULL)) == NULL || (raw = PyTuple_Pack(2, d1, d2)) == NULL)
        goto done;
    result = new_tensor(self->name, data, b1, inputs, self->vjps, self->saved, self->saves_output, raw, enabled);
done:
    Py_XDECREF(b1);
    Py_XDECREF(b2);
    Py_XDECREF(d1);
    Py_XDECREF(d2);
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
    PyObject *name, *forward, *vjps, *saved, *saves_output, *function;
    static char *keywords[] = {"name", "forward", "vjps", "saved", "saves_output", "function", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UOO!OOO:BinaryOp", keywords, &name, &forward, &PyTuple_Type,
                                     &vjps, &saved, &saves_output, &function))
        return NULL;
    BinaryOp *self = (BinaryOp *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    PyObject **fields[] = {&self->name, &self->forward, &self->vjps, &self->saved, &self->saves_output,
                           &self->function};
    PyObject *values[] = {name, forward, vjps, saved, saves_output, function};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        *fields[i] = Py_NewRef(values[i]);
    self->vectorcall = binary_call;
    return (PyObject *)self;
}

static int
binary_traverse(BinaryOp *self, visitproc visit, void *arg)
{
    Py_VISIT(self->name);
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
    Py_CLEAR(self->name);
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

/* __name__, __doc__, __wrapped__ (so inspect.signature finds the Python op's) and the rest
 * are the Python op's. */
static PyObject *
binary_getattro(PyObject *self, PyObject *name)
{
    PyObject *found = PyObject_GenericGetAttr(self, name);
    if (found != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return found;
    PyErr_Clear();
    if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__wrapped__") == 0)
        return Py_NewRef(((BinaryOp *)self)->function);
    return PyObject_GetAttr(((BinaryOp *)self)->function, name);
}

static PyObject *
binary_doc(BinaryOp *self, void *closure)
{
    return PyObject_GetAttrString(self->function, "__doc__");
}

static PyGetSetDef binary_getset[] = {{"__doc__", (getter)binary_doc, NULL, NULL, NULL}, {NULL}};

static PyObject *
binary_repr(BinaryOp *self)
{
    return PyUnicode_FromFormat("<compiled elementwise op %U>", self->name);
}

static PyTypeObject BinaryOpType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "autograd_core._sweep.BinaryOp",
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
    PyObject *attr = PyObject_GetAttr(node, s_parents);
    if (attr == NULL)
        return -1;
    PyObject *parents = PySequence_Fast(attr, "a tensor's _parents must be a sequence");
    Py_DECREF(attr);
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
"Every tensor the roots reach through ``_parents``, inputs before outputs: an iterative\n"
"depth-first search in the order of engine.topological_order's Python loop.");

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

/* --- sweep ------------------------------------------------------------------------------- */

typedef struct {
    PyObject *grads, *ns, *backend, *epoch, *nothing_saved, *visit, *accumulate, *reduce;
    int release;
} Sweep;

/* grads[id(key_of)] += contribution (or = it, the first time). Steals `contribution`. */
static int
add_gradient(PyObject *grads, PyObject *key_of, PyObject *contribution)
{
    PyObject *key = PyLong_FromVoidPtr(key_of);
    if (key == NULL) {
        Py_DECREF(contribution);
        return -1;
    }
    PyObject *previous = PyDict_GetItemWithError(grads, key); /* borrowed */
    PyObject *total = contribution;
    if (previous != NULL) {
        total = PyNumber_Add(previous, contribution);
        Py_DECREF(contribution);
    }
    int failed = total == NULL || (PyErr_Occurred() != NULL && previous == NULL) || PyDict_SetItem(grads, key, total) < 0;
    Py_XDECREF(total);
    Py_DECREF(key);
    return failed ? -1 : 0;
}

/* Calls each VJP of `node` on the raw arrays and adds what it gives to its parent's gradient:
 * engine's visit for a node that needs nothing else. */
static int
send_back(Sweep *s, PyObject *node, PyObject *grad, PyObject *vjps, PyObject *raw)
{
    int result = -1;
    PyObject *out = PyObject_GetAttr(node, s_data);
    PyObject *parents_attr = PyObject_GetAttr(node, s_parents);
    PyObject *parents = parents_attr ? PySequence_Fast(parents_attr, "_parents must be a sequence") : NULL;
    if (out == NULL || parents == NULL)
        goto done;
    Py_ssize_t n_inputs = PyTuple_GET_SIZE(raw), n = PySequence_Fast_GET_SIZE(vjps);
    PyObject *small[8], **args = n_inputs + 3 <= 8 ? small : PyMem_Malloc((n_inputs + 3) * sizeof(PyObject *));
    if (args == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    args[0] = s->ns;
    args[1] = grad;
    args[2] = out;
    for (Py_ssize_t i = 0; i < n_inputs; i++)
        args[3 + i] = PyTuple_GET_ITEM(raw, i);
    Py_ssize_t i = 0, count = Py_MIN(n, PySequence_Fast_GET_SIZE(parents)); /* zip(parents, vjps) */
    for (; i < count; i++) {
        PyObject *parent = PySequence_Fast_GET_ITEM(parents, i);
        PyObject *contribution = PyObject_Vectorcall(PySequence_Fast_GET_ITEM(vjps, i), args, n_inputs + 3, NULL);
        if (contribution == NULL)
            break;
        PyObject *got = PyObject_GetAttr(contribution, s_shape);
        PyObject *parent_data = got ? PyObject_GetAttr(parent, s_data) : NULL;
        PyObject *want = parent_data ? PyObject_GetAttr(parent_data, s_shape) : NULL;
        int differ = want ? PyObject_RichCompareBool(got, want, Py_NE) : -1;
        Py_XDECREF(got);
        Py_XDECREF(parent_data);
        Py_XDECREF(want);
        if (differ > 0) { /* a broadcast input: engine._reduce_to_input sums it back */
            PyObject *reduced = PyObject_CallFunctionObjArgs(s->reduce, s->ns, contribution, parent, node, NULL);
            Py_DECREF(contribution);
            contribution = reduced;
        }
        if (differ < 0 || contribution == NULL || add_gradient(s->grads, parent, contribution) < 0) {
            if (differ < 0)
                Py_XDECREF(contribution);
            break;
        }
    }
    if (args != small)
        PyMem_Free(args);
    result = i == count ? 0 : -1;
done:
    Py_XDECREF(out);
    Py_XDECREF(parents_attr);
    Py_XDECREF(parents);
    return result;
}

static int
release(Sweep *s, PyObject *node)
{
    PyObject *empty = PyTuple_New(0);
    int failed = empty == NULL
        || PyObject_SetAttr(node, s_parents, empty) < 0 || PyObject_SetAttr(node, s_vjps, Py_None) < 0
        || PyObject_SetAttr(node, s_inputs, empty) < 0 || PyObject_SetAttr(node, s_raw, Py_None) < 0
        || PyObject_SetAttr(node, s_saved, s->nothing_saved) < 0;
    Py_XDECREF(empty);
    return failed ? -1 : 0;
}

/* 1 if `node` (an op's output) needs only its VJPs, its saved tensors unchanged since the
 * forward and its inputs' arrays at hand; 0 if engine's visit must take it; -1 on error. */
static int
plain_op(Sweep *s, PyObject *node, PyObject **raw)
{
    *raw = NULL;
    PyObject *saved = PyObject_GetAttr(node, s_saved);
    if (saved == NULL)
        return -1;
    int same_epoch = PyTuple_Check(saved) && PyTuple_GET_SIZE(saved) == 3
        ? PyObject_RichCompareBool(PyTuple_GET_ITEM(saved, 2), PyList_GET_ITEM(s->epoch, 0), Py_EQ)
        : 0;
    Py_DECREF(saved);
    if (same_epoch <= 0)
        return same_epoch;
    PyObject *backend = PyObject_GetAttr(node, s_backend);
    if (backend == NULL)
        return -1;
    Py_DECREF(backend);
    if (backend != s->backend)
        return 0;
    *raw = PyObject_GetAttr(node, s_raw);
    if (*raw == NULL)
        return -1;
    if (PyTuple_Check(*raw))
        return 1;
    Py_CLEAR(*raw);
    return 0;
}

/* Visits `node` with `grad` (borrowed). */
static int
visit_node(Sweep *s, PyObject *node, PyObject *grad)
{
    int result = -1, plain = 0;
    PyObject *raw = NULL, *vjps = NULL, *vjps_fast = NULL, *hooks = PyObject_GetAttr(node, s_hooks);
    if (hooks == NULL)
        return -1;
    int hooked = PyObject_IsTrue(hooks);
    Py_DECREF(hooks);
    if (hooked < 0 || (vjps = PyObject_GetAttr(node, s_vjps)) == NULL)
        return -1;
    Py_ssize_t n_vjps = vjps == Py_None || hooked ? -1 : PyObject_Length(vjps);
    if (n_vjps == -1 && PyErr_Occurred())
        goto done;
    if (n_vjps == 0) { /* a leaf without hooks */
        PyObject *r = PyObject_CallFunctionObjArgs(s->accumulate, node, grad, Py_True, NULL);
        result = r == NULL ? -1 : 0;
        Py_XDECREF(r);
        goto done;
    }
    if (n_vjps > 0 && (plain = plain_op(s, node, &raw)) < 0)
        goto done;
    if (!plain) {
        PyObject *r = PyObject_CallFunctionObjArgs(s->visit, node, grad, NULL);
        result = r == NULL ? -1 : 0;
        Py_XDECREF(r);
        goto done;
    }
    vjps_fast = PySequence_Fast(vjps, "_vjps must be a sequence");
    if (vjps_fast == NULL || send_back(s, node, grad, vjps_fast, raw) < 0)
        goto done;
    result = s->release ? release(s, node) : 0;
done:
    Py_XDECREF(raw);
    Py_XDECREF(vjps);
    Py_XDECREF(vjps_fast);
    return result;
}

PyDoc_STRVAR(sweep_doc,
"sweep(order, grads, ns, backend, epoch, release, nothing_saved, visit, accumulate, reduce) -> None\n\n"
"Visits the nodes of `order` (a topological order) from the last to the first, each that has\n"
"a gradient in `grads` (keyed by id), as engine.run_backward's Python loop does.");

static PyObject *
sweep(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 10 || !PyList_Check(args[0]) || !PyDict_Check(args[1]) || !PyList_Check(args[4])
        || PyList_GET_SIZE(args[4]) != 1) {
        PyErr_SetString(PyExc_TypeError, "sweep(order: list, grads: dict, ns, backend, epoch: [int], release, "
                                         "nothing_saved, visit, accumulate, reduce)");
        return NULL;
    }
    int release_saved = PyObject_IsTrue(args[5]);
    if (release_saved < 0)
        return NULL;
    Sweep s = {args[1], args[2], args[3], args[4], args[6], args[7], args[8], args[9], release_saved};
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
        Py_INCREF(grad); /* the sweep's reference: the dict's goes now, as the Python loop pops it */
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
    {"configure", (PyCFunction)configure, METH_VARARGS, configure_doc},
    {"record", (PyCFunction)(void (*)(void))record, METH_FASTCALL | METH_KEYWORDS, record_doc},
    {"topological_order", (PyCFunction)topological_order, METH_O, topological_order_doc},
    {"sweep", (PyCFunction)(void (*)(void))sweep, METH_FASTCALL, sweep_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "autograd_core._sweep",
    "The reverse sweep's loops, compiled (see engine.py for the Python reference).", -1, methods,
};

PyMODINIT_FUNC
PyInit__sweep(void)
{
    struct {
        PyObject **name;
        const char *text;
    } names[] = {
        {&s_parents, "_parents"}, {&s_vjps, "_vjps"}, {&s_hooks, "_hooks"}, {&s_saved, "_saved"},
        {&s_backend, "backend"}, {&s_data, "data"}, {&s_raw, "_raw"}, {&s_shape, "shape"}, {&s_inputs, "_inputs"},
        {&s_enabled, "enabled"}, {&s_requires_grad, "requires_grad"}, {&s_op, "_op"}, {&s_dtype, "dtype"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if ((*names[i].name = PyUnicode_InternFromString(names[i].text)) == NULL)
            return NULL;
    if ((empty_tuple = PyTuple_New(0)) == NULL || PyType_Ready(&BinaryOpType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddObjectRef(m, "BinaryOp", (PyObject *)&BinaryOpType) < 0)
        Py_CLEAR(m);
    return m;
}
