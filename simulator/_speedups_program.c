/* simulator._speedups: a model's computationTime run as a program of doubles (evaluate_program,
 * and SimCore.computation before the memo).
 *
 * Python reference: simulator/models/js_program.py evaluate_python (the instructions, the
 * parameters it reads, the values it declines), chosen by simulator/hotpath.py.
 * Differential test: tests/simulator/models/test_js_program.py
 *   (test_the_c_core_runs_programs_as_the_python_reference_does and the error cases; a program
 *   checked whole once runs without the per-instruction checks: the malformed, unsound and
 *   evicted programs' tests).
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_speedups.h"

#include <float.h>

/* The opcodes: js_program.OPS, in the same numbering (the differential test compares
 * program_ops() with it). */
#define PROGRAM_OPS(X)                                                                         \
    X(CONST) X(PARAM) X(PARAM_OR) X(LOAD) X(STORE) X(ADD) X(SUB) X(MUL) X(DIV) X(MOD) X(NEG)   \
    X(LT) X(GT) X(LE) X(GE) X(EQ) X(NE) X(NOT) X(TRUTHY) X(JUMP_IF_FALSE) X(JUMP) X(MIN)       \
    X(MAX) X(ABS) X(FLOOR) X(CEIL) X(ROUND) X(TRUNC) X(SIGN) X(SQRT) X(RETURN) X(DECLINE)
#define PROGRAM_ENUM(op) OP_##op,
enum { PROGRAM_OPS(PROGRAM_ENUM) OP_COUNT };

#define PROGRAM_STACK 32 /* js_program.MAX_STACK */
#define PROGRAM_SLOTS 64 /* js_program.MAX_SLOTS */

/* A parameter's double as the compiled model reads it: a float, or an int as the double
 * nearest it (PyLong_AsDouble rounds as float(int) does). 1: read; 0: not a number (or an int
 * beyond the doubles): the program declines. */
static int
program_parameter(PyObject *value, double *out)
{
    if (PyFloat_CheckExact(value)) {
        *out = PyFloat_AS_DOUBLE(value);
        return 1;
    }
    if (PyLong_CheckExact(value)) {
        double number = PyLong_AsDouble(value);
        if (number == -1.0 && PyErr_Occurred()) {
            PyErr_Clear(); /* OverflowError: the compiled model declines it too */
            return 0;
        }
        *out = number;
        return 1;
    }
    return 0;
}

/* Math.min / Math.max of `count` values (js_compiler._math_min, _math_max): NaN when any is,
 * -0 below +0 for min and above it for max. */
static double
program_extreme(const double *values, int count, int is_max)
{
    double result = is_max ? -INFINITY : INFINITY;
    for (int index = 0; index < count; index++) {
        double x = values[index];
        if (x != x)
            return NAN;
        if (is_max ? (x > result || (x == 0 && result == 0 && !signbit(x)))
                   : (x < result || (x == 0 && result == 0 && signbit(x))))
            result = x;
    }
    return result;
}

/* Math.floor, ceil, trunc: an infinity or NaN as it is, a zero result with x's sign. */
static double
program_whole(double x, double whole)
{
    if (!isfinite(x))
        return x;
    return whole != 0 ? whole : copysign(0.0, x);
}

/* Math.round (js_compiler._round): the nearest integer, a tie toward +infinity, -0 for
 * [-0.5, -0]. */
static double
program_round(double x)
{
    if (!isfinite(x))
        return x;
    double whole = floor(x);
    double result = x - whole >= 0.5 ? whole + 1 : whole;
    if (result == 0 && (x < 0 || signbit(x)))
        return -0.0;
    return result;
}

#define PROGRAM_INSTRUCTIONS 2048 /* js_program.MAX_INSTRUCTIONS */

/* Whether instruction (op, arg), the one before `at`, may run with `depth` values on the
 * stack: a known opcode, as many values as it takes and room for what it leaves, an argument
 * that names a constant, a parameter or a slot the program has, a forward jump within it, a
 * Math.min/max of at least one value. Sets what it takes and leaves. */
static inline int
program_fits(uint16_t op, uint16_t arg, int depth, Py_ssize_t at, Py_ssize_t length,
             Py_ssize_t constant_count, Py_ssize_t name_count, long slot_count, int *takes,
             int *gives)
{
    *takes = 0;
    *gives = 0;
    switch (op) {
    case OP_CONST: case OP_PARAM: case OP_LOAD: *gives = 1; break;
    case OP_PARAM_OR: *takes = 1; *gives = 1; break;
    case OP_STORE: case OP_JUMP_IF_FALSE: case OP_RETURN: *takes = 1; break;
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_MOD: case OP_LT:
    case OP_GT: case OP_LE: case OP_GE: case OP_EQ: case OP_NE: *takes = 2; *gives = 1; break;
    case OP_MIN: case OP_MAX: *takes = arg; *gives = 1; break;
    case OP_JUMP: case OP_DECLINE: break;
    default: *takes = 1; *gives = 1; break; /* the unary operations */
    }
    return !(op >= OP_COUNT || depth < *takes || depth - *takes + *gives > PROGRAM_STACK ||
             (op == OP_MIN || op == OP_MAX ? arg == 0 : 0) ||
             (op == OP_CONST && arg >= constant_count) ||
             ((op == OP_PARAM || op == OP_PARAM_OR) && arg >= name_count) ||
             ((op == OP_LOAD || op == OP_STORE) && arg >= slot_count) ||
             ((op == OP_JUMP || op == OP_JUMP_IF_FALSE) && (arg < at || arg > length)));
}

/* Whether no run of the program can meet what program_run's checks refuse: every constant a
 * float, every instruction a path reaches fits (program_fits) with the same depth on every
 * path to it, and every path ends in RETURN or DECLINE. Jumps go forward (program_fits), so
 * one pass in order sees an instruction's every predecessor before it. */
static int
program_sound(const unsigned char *bytes, Py_ssize_t length, PyObject *constants,
              Py_ssize_t name_count, long slot_count)
{
    Py_ssize_t constant_count = PyTuple_GET_SIZE(constants);
    if (length == 0 || length > PROGRAM_INSTRUCTIONS)
        return 0;
    for (Py_ssize_t index = 0; index < constant_count; index++)
        if (!PyFloat_CheckExact(PyTuple_GET_ITEM(constants, index)))
            return 0;
    signed char depth_at[PROGRAM_INSTRUCTIONS]; /* -1: no path reaches it (yet) */
    memset(depth_at, -1, (size_t)length);
    depth_at[0] = 0;
    for (Py_ssize_t at = 0; at < length; at++) {
        if (depth_at[at] < 0)
            continue;
        uint16_t op, arg;
        memcpy(&op, bytes + 4 * at, 2);
        memcpy(&arg, bytes + 4 * at + 2, 2);
        int takes, gives;
        if (!program_fits(op, arg, depth_at[at], at + 1, length, constant_count, name_count,
                          slot_count, &takes, &gives))
            return 0;
        Py_ssize_t next[2];
        int count = 0;
        if (op == OP_JUMP)
            next[count++] = arg;
        else if (op != OP_RETURN && op != OP_DECLINE) {
            next[count++] = at + 1;
            if (op == OP_JUMP_IF_FALSE)
                next[count++] = arg;
        }
        int depth = depth_at[at] - takes + gives;
        for (int index = 0; index < count; index++) {
            if (next[index] >= length) /* off the end: "ends without RETURN" */
                return 0;
            if (depth_at[next[index]] < 0)
                depth_at[next[index]] = (signed char)depth;
            else if (depth_at[next[index]] != depth)
                return 0;
        }
    }
    return 1;
}

/* The programs found sound (program_sound), each held so that its address stays its own: a
 * run's models are a few programs, each asked once a computation, checked whole once. */
#define SOUND_PROGRAMS 16
static PyObject *sound_programs[SOUND_PROGRAMS];
static int sound_last;

static int
program_known_sound(PyObject *program)
{
    for (int step = 0; step < SOUND_PROGRAMS; step++) {
        int index = (sound_last - step + SOUND_PROGRAMS) % SOUND_PROGRAMS;
        if (sound_programs[index] == program)
            return 1;
    }
    return 0;
}

static void
program_keep_sound(PyObject *program)
{
    sound_last = (sound_last + 1) % SOUND_PROGRAMS;
    Py_XSETREF(sound_programs[sound_last], Py_NewRef(program));
}

/* The instructions from the first to RETURN or DECLINE, each checked (program_fits) as it
 * comes unless `checked` is 0: a sound program's (program_sound), which cannot fail them. */
/* The parameters a program reads that params' walk (program_value) met under their very name
 * object (the names are interned, as an application's literal keys are): each read then takes
 * its value without a dict lookup; an equal key of another object, or none, is looked up. */
#define PROGRAM_KNOWN 8

static inline Py_ALWAYS_INLINE int
program_run(const unsigned char *bytes, Py_ssize_t length, PyObject *constants,
            PyObject *names, long slot_count, PyObject *params, PyObject *const *known,
            double *out, const int checked)
{
    Py_ssize_t constant_count = PyTuple_GET_SIZE(constants), name_count = PyTuple_GET_SIZE(names);
    double stack[PROGRAM_STACK], slots[PROGRAM_SLOTS];
    for (long index = 0; index < slot_count; index++)
        slots[index] = 0.0;
    int depth = 0;
    Py_ssize_t at = 0;
    while (at < length) {
        uint16_t op, arg;
        memcpy(&op, bytes + 4 * at, 2);
        memcpy(&arg, bytes + 4 * at + 2, 2);
        at++;
        int takes, gives;
        if (checked && !program_fits(op, arg, depth, at, length, constant_count, name_count,
                                     slot_count, &takes, &gives)) {
            PyErr_SetString(PyExc_ValueError, "not a well-formed program");
            return -1;
        }
        double *top = stack + depth - 1; /* the topmost value before the instruction */
        switch (op) {
        case OP_CONST: {
            PyObject *constant = PyTuple_GET_ITEM(constants, arg);
            if (checked && !PyFloat_CheckExact(constant)) {
                PyErr_SetString(PyExc_TypeError, "a program's constants are floats");
                return -1;
            }
            stack[depth++] = PyFloat_AS_DOUBLE(constant);
            break;
        }
        case OP_PARAM:
        case OP_PARAM_OR: {
            PyObject *key = PyTuple_GET_ITEM(names, arg);
            PyObject *found = arg < PROGRAM_KNOWN ? known[arg] : NULL; /* borrowed */
            if (found == NULL)
                found = PyDict_GetItemWithError(params, key); /* borrowed */
            if (found == NULL) {
                if (PyErr_Occurred())
                    return -1;
                if (op == OP_PARAM)
                    return 0; /* undefined: the compiled model and V8 say what follows */
                break;       /* the fallback pushed before stays */
            }
            double number;
            if (!program_parameter(found, &number))
                return 0;
            if (op == OP_PARAM)
                stack[depth++] = number;
            else
                *top = number;
            break;
        }
        case OP_LOAD: stack[depth++] = slots[arg]; break;
        case OP_STORE: slots[arg] = stack[--depth]; break;
        case OP_ADD: top[-1] = top[-1] + top[0]; depth--; break;
        case OP_SUB: top[-1] = top[-1] - top[0]; depth--; break;
        case OP_MUL: top[-1] = top[-1] * top[0]; depth--; break;
        case OP_DIV: /* by zero: the compiled model leaves it to V8, and so does this */
            if (top[0] == 0.0)
                return 0;
            top[-1] = top[-1] / top[0];
            depth--;
            break;
        case OP_MOD: /* outside fmod's domain in Python (math.fmod raises): likewise */
            if (top[0] == 0.0 || isinf(top[-1]))
                return 0;
            top[-1] = fmod(top[-1], top[0]);
            depth--;
            break;
        case OP_LT: top[-1] = top[-1] < top[0]; depth--; break;
        case OP_GT: top[-1] = top[-1] > top[0]; depth--; break;
        case OP_LE: top[-1] = top[-1] <= top[0]; depth--; break;
        case OP_GE: top[-1] = top[-1] >= top[0]; depth--; break;
        case OP_EQ: top[-1] = top[-1] == top[0]; depth--; break;
        case OP_NE: top[-1] = top[-1] != top[0]; depth--; break;
        case OP_NEG: *top = -*top; break;
        case OP_NOT: *top = *top != 0.0 ? 0.0 : 1.0; break;
        case OP_TRUTHY: *top = *top == *top && *top != 0.0; break;
        case OP_JUMP_IF_FALSE:
            if (stack[--depth] == 0.0)
                at = arg;
            break;
        case OP_JUMP: at = arg; break;
        case OP_MIN:
        case OP_MAX: {
            double extreme = program_extreme(stack + depth - arg, arg, op == OP_MAX);
            depth -= arg;
            stack[depth++] = extreme;
            break;
        }
        case OP_ABS: *top = fabs(*top); break;
        case OP_FLOOR: *top = program_whole(*top, floor(*top)); break;
        case OP_CEIL: *top = program_whole(*top, ceil(*top)); break;
        case OP_TRUNC: *top = program_whole(*top, trunc(*top)); break;
        case OP_ROUND: *top = program_round(*top); break;
        case OP_SIGN:
            if (!(*top != *top || *top == 0))
                *top = *top > 0 ? 1.0 : -1.0;
            break;
        case OP_SQRT: *top = *top != *top || *top < 0 ? NAN : sqrt(*top); break;
        case OP_DECLINE: return 0; /* a `throw`: V8 throws it, on the usual path */
        case OP_RETURN: {
            double result = stack[--depth];
            /* NaN fails both: simulator.errors.model_seconds's rule */
            if (!(result >= 0.0 && result <= DBL_MAX))
                return 0;
            *out = result;
            return 1;
        }
        }
    }
    PyErr_SetString(PyExc_ValueError, "a program that ends without RETURN");
    return -1;
}

/* Run `program` (a js_program.Program) on `params` (a dict or api.HashMap): 1 with the value
 * in `*out` when it is a model's time (a finite double >= 0), 0 when the program declines (a
 * parameter not plain, missing or not a number, another value), -1 with an error when
 * `program` is not a well-formed program. */
static int
program_value(PyObject *program, PyObject *params, double *out)
{
    if (!PyTuple_Check(program) || PyTuple_GET_SIZE(program) != 4) {
        PyErr_SetString(PyExc_TypeError, "a program is (code, constants, names, slots)");
        return -1;
    }
    PyObject *code_obj = PyTuple_GET_ITEM(program, 0);
    PyObject *constants = PyTuple_GET_ITEM(program, 1);
    PyObject *names = PyTuple_GET_ITEM(program, 2);
    PyObject *slots_obj = PyTuple_GET_ITEM(program, 3);
    if (!PyBytes_CheckExact(code_obj) || !PyTuple_CheckExact(constants) ||
        !PyTuple_CheckExact(names) || !PyLong_CheckExact(slots_obj) ||
        PyBytes_GET_SIZE(code_obj) % 4 != 0) {
        PyErr_SetString(PyExc_TypeError, "a program is (code, constants, names, slots)");
        return -1;
    }
    long slot_count = PyLong_AsLong(slots_obj);
    if (slot_count < 0 || slot_count > PROGRAM_SLOTS) {
        PyErr_SetString(PyExc_ValueError, "a program has at most 64 slots");
        return -1;
    }
    /* the params as the compiled model reads them without a conversion (plain_parameter) */
    PyObject *known[PROGRAM_KNOWN] = {NULL};
    Py_ssize_t position = 0, name_count = PyTuple_GET_SIZE(names);
    Py_ssize_t known_count = name_count < PROGRAM_KNOWN ? name_count : PROGRAM_KNOWN;
    PyObject *name, *value;
    while (PyDict_Next(params, &position, &name, &value)) {
        if (!plain_parameter(name, value))
            return 0;
        for (Py_ssize_t index = 0; index < known_count; index++)
            if (PyTuple_GET_ITEM(names, index) == name)
                known[index] = value;
    }

    const unsigned char *bytes = (const unsigned char *)PyBytes_AS_STRING(code_obj);
    Py_ssize_t length = PyBytes_GET_SIZE(code_obj) / 4;
    int sound = program_known_sound(program);
    if (!sound && program_sound(bytes, length, constants, PyTuple_GET_SIZE(names), slot_count)) {
        program_keep_sound(program);
        sound = 1;
    }
    if (sound)
        return program_run(bytes, length, constants, names, slot_count, params, known, out, 0);
    return program_run(bytes, length, constants, names, slot_count, params, known, out, 1);
}

/* evaluate_program(program, params): the program's value for params, or None where it
 * declines (js_program.evaluate_python). */
static PyObject *
evaluate_program(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !(PyDict_CheckExact(args[1]) || Py_TYPE(args[1]) == plain_params_type)) {
        PyErr_SetString(PyExc_TypeError, "evaluate_program(program, params: dict)");
        return NULL;
    }
    double value;
    int status = program_value(args[0], args[1], &value);
    if (status < 0)
        return NULL;
    if (status == 0)
        Py_RETURN_NONE;
    return PyFloat_FromDouble(value);
}

/* program_ops(): the opcodes by name, for the test that they are js_program.OPS. */
static PyObject *
program_ops(PyObject *module, PyObject *unused)
{
    PyObject *ops = PyDict_New();
#define PROGRAM_OP_ITEM(op)                                                                    \
    if (ops != NULL) {                                                                         \
        PyObject *code = PyLong_FromLong(OP_##op);                                             \
        if (code == NULL || PyDict_SetItemString(ops, #op, code) < 0)                          \
            Py_CLEAR(ops);                                                                     \
        Py_XDECREF(code);                                                                      \
    }
    PROGRAM_OPS(PROGRAM_OP_ITEM)
#undef PROGRAM_OP_ITEM
    return ops;
}
