// opgen native CPython entry: what the extension module `opgen compile` emits beside a compiled
// library uses to call the library's C-ABI entry point (opgen/compiler/entry_abi.py) straight
// from Python values. Hand-written, versioned with opgen; it is hashed into every build key.
//
// Why it exists: through ctypes every argument is marshalled by Python code (a list of N strings
// cost N ctypes objects) and every result rebuilt the same way; here a str crosses as its own
// UTF-8 (PyUnicode_AsUTF8AndSize, no copy), a list by walking it in C, a NumPy array or CPU torch
// tensor as a view of its memory, and results are built in C (a tensor owns the library's buffer).
//
// One rule keeps it exactly as the ctypes host (opgen/host.py) behaves: the C side takes only
// what it recognises as valid (an exact int in int64, a str, a float32 ndarray for a float32
// parameter, ...). Anything else goes to the host's own Python conversion (`coerce`), which
// raises the error the ctypes path raises, with its message, or returns the plain value the C
// side then takes (np.int64 -> int). Binding works the same way: positions, keywords and
// defaults are matched here, and a call Python's Signature.bind would refuse is handed to it.
#ifndef OPGEN_PYTHON_ENTRY_HPP
#define OPGEN_PYTHON_ENTRY_HPP

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <initializer_list>
#include <new>
#include <type_traits>
#include <vector>

#include "opgen_abi.h"

static_assert(sizeof(Py_ssize_t) == sizeof(int64_t), "shapes cross as int64_t");
static_assert(sizeof(npy_intp) == sizeof(int64_t), "shapes cross as int64_t");

namespace opgen::pyentry {

// What one bound function needs at call time (filled by bind(), see opgen/host.py).
struct State {
  void* entry = nullptr;                  // the library's opgen_compiled_<function>
  void (*free_fn)(void*) = nullptr;       // the library's opgen_free
  PyObject* names = nullptr;              // tuple of parameter names (interned)
  PyObject* defaults = nullptr;           // tuple: each parameter's default, or `missing`
  PyObject* missing = nullptr;            // the marker of a parameter without a default
  PyObject* coerce = nullptr;             // coerce(index, value) -> plain value, or raises as the ctypes host
  PyObject* bind = nullptr;               // bind(args, kwargs) -> tuple of values, or raises Python's TypeError
  PyObject* errors = nullptr;             // dict: status -> exception class
  PyObject* kernel_error = nullptr;       // the class of any other status
  PyObject* param_dtypes = nullptr;       // tuple: each parameter's np.dtype (None when not a tensor)
  PyObject* torch_dtypes = nullptr;       // tuple: each parameter's torch dtype where the fast torch path may take it, else None
  PyObject* result_dtypes = nullptr;      // tuple: each tensor result slot's np.dtype, in slot order
  PyObject* from_numpy = nullptr;         // torch.from_numpy where the result is a torch tensor, else None
  PyObject* function = nullptr;           // the function's name, for messages
  Py_ssize_t nparams = 0;
};

// ---------------------------------------------------------------- arguments
//
// Each argument kind has take(State&, index, value): 1 when taken, 0 when the value is not one
// the C side recognises (nothing raised), -1 with a Python error set. The taken value stays valid
// while the argument object lives (references to what it points into are held).

struct Held {
  std::vector<PyObject*> refs;
  Held() = default;
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  ~Held() {
    for (PyObject* o : refs) Py_DECREF(o);
  }
  void hold(PyObject* o) {
    Py_INCREF(o);
    refs.push_back(o);
  }
};

inline int int_of(PyObject* v, int64_t& out) {
  if (!PyLong_CheckExact(v)) return 0;
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (overflow) return 0;  // the host raises OverflowError with its message
  if (x == -1 && PyErr_Occurred()) return -1;
  out = static_cast<int64_t>(x);
  return 1;
}

inline int float_of(PyObject* v, double& out) {
  if (PyFloat_CheckExact(v)) {
    out = PyFloat_AS_DOUBLE(v);
    return 1;
  }
  return 0;  // an int, np.float32, ...: the host converts as float() does
}

inline int bool_of(PyObject* v, uint8_t& out) {
  if (v == Py_True || v == Py_False) {
    out = v == Py_True;
    return 1;
  }
  return 0;  // a np.bool_: the host hands it back as True or False
}

inline int str_of(PyObject* v, opgen_string& out) {
  if (!PyUnicode_Check(v)) return 0;
  Py_ssize_t len = 0;
  const char* data = PyUnicode_AsUTF8AndSize(v, &len);  // the str's own UTF-8: no copy after the first
  if (data == nullptr) {  // a lone surrogate: the host raises UnicodeEncodeError as str.encode does
    PyErr_Clear();
    return 0;
  }
  out = opgen_string{const_cast<char*>(data), static_cast<int64_t>(len)};
  return 1;
}

struct IntArg {
  int64_t value = 0;
  int take(State&, Py_ssize_t, PyObject* v) { return int_of(v, value); }
};

struct FloatArg {
  double value = 0.0;
  int take(State&, Py_ssize_t, PyObject* v) { return float_of(v, value); }
};

struct BoolArg {
  uint8_t value = 0;
  int take(State&, Py_ssize_t, PyObject* v) { return bool_of(v, value); }
};

struct StrArg {
  opgen_string s{};
  Held held;
  int take(State&, Py_ssize_t, PyObject* v) {
    int r = str_of(v, s);
    if (r == 1) held.hold(v);  // the UTF-8 lives in the str
    return r;
  }
  const char* data() const { return s.data; }
  int64_t len() const { return s.len; }
};

// A list or tuple (as the ctypes host accepts) walked in C; the sequence's items are held for
// the call (the GIL is released while the library runs, and another thread may change the list).
template <class Elem>
struct ListArg {
  std::vector<Elem> items;
  Held held;
  int take(State&, Py_ssize_t, PyObject* v) {
    if (!PyList_Check(v) && !PyTuple_Check(v)) return 0;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
    PyObject** src = PySequence_Fast_ITEMS(v);
    items.resize(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      int r = elem_of(src[i], items[static_cast<size_t>(i)]);
      if (r != 1) return r;
    }
    if constexpr (std::is_same_v<Elem, opgen_string>) {
      held.refs.reserve(static_cast<size_t>(n));
      for (Py_ssize_t i = 0; i < n; ++i) held.hold(src[i]);
    }
    return 1;
  }
  const Elem* data() const { return items.data(); }
  int64_t len() const { return static_cast<int64_t>(items.size()); }

  static int elem_of(PyObject* v, int64_t& out) { return int_of(v, out); }
  static int elem_of(PyObject* v, double& out) { return float_of(v, out); }
  static int elem_of(PyObject* v, uint8_t& out) { return bool_of(v, out); }
  static int elem_of(PyObject* v, opgen_string& out) { return str_of(v, out); }
};

// dict[str, T]: keys and values in insertion order.
template <class Elem>
struct DictArg {
  std::vector<opgen_string> keys;
  std::vector<Elem> values;
  Held held;
  int take(State&, Py_ssize_t, PyObject* v) {
    if (!PyDict_Check(v)) return 0;
    const Py_ssize_t n = PyDict_GET_SIZE(v);
    keys.resize(static_cast<size_t>(n));
    values.resize(static_cast<size_t>(n));
    Py_ssize_t pos = 0, i = 0;
    PyObject *key, *value;
    held.refs.reserve(static_cast<size_t>(2 * n));
    while (PyDict_Next(v, &pos, &key, &value)) {
      int r = str_of(key, keys[static_cast<size_t>(i)]);
      if (r != 1) return r;
      r = ListArg<Elem>::elem_of(value, values[static_cast<size_t>(i)]);
      if (r != 1) return r;
      held.hold(key);
      held.hold(value);
      ++i;
    }
    return 1;
  }
  const opgen_string* key_data() const { return keys.data(); }
  const Elem* value_data() const { return values.data(); }
  int64_t len() const { return static_cast<int64_t>(keys.size()); }
};

// A tensor argument: a NumPy array of the parameter's dtype, or (torch parameters) a CPU torch
// tensor of it, viewed in place: data, shape and strides (in elements) are the array's own.
struct TensorArg {
  opgen_tensor view{};
  int64_t shape[NPY_MAXDIMS];
  int64_t strides[NPY_MAXDIMS];
  Held held;

  int take(State& st, Py_ssize_t index, PyObject* v) {
    PyObject* want = PyTuple_GET_ITEM(st.param_dtypes, index);
    if (PyArray_Check(v)) return take_array(reinterpret_cast<PyArrayObject*>(v), reinterpret_cast<PyArray_Descr*>(want));
    PyObject* torch_dtype = PyTuple_GET_ITEM(st.torch_dtypes, index);
    if (torch_dtype != Py_None) return take_torch(v, torch_dtype, reinterpret_cast<PyArray_Descr*>(want));
    return 0;
  }

  int take_array(PyArrayObject* a, PyArray_Descr* want) {
    PyArray_Descr* have = PyArray_DESCR(a);
    if (have != want && !PyArray_EquivTypes(have, want)) return 0;
    const int nd = PyArray_NDIM(a);
    if (nd > OPGEN_MAX_DIMS) return 0;  // the host's view raises for it
    const npy_intp item = PyArray_ITEMSIZE(a);
    const npy_intp* dims = PyArray_DIMS(a);
    const npy_intp* bytes = PyArray_STRIDES(a);
    for (int d = 0; d < nd; ++d) {
      if (bytes[d] % item) return 0;  // the host raises ValueError for it
      shape[d] = dims[d];
      strides[d] = bytes[d] / item;
    }
    held.hold(reinterpret_cast<PyObject*>(a));
    fill(PyArray_DATA(a), nd, have);
    return 1;
  }

  // Only what tensor.detach().numpy() would give without an error: a strided CPU tensor of the
  // parameter's dtype without the negative bit. Anything else goes to the host's conversion.
  int take_torch(PyObject* v, PyObject* torch_dtype, PyArray_Descr* want) {
    PyObject* torch = PyImport_GetModule(names().torch);  // a torch tensor means torch is imported
    if (torch == nullptr) return PyErr_Occurred() ? -1 : 0;
    PyObject* tensor_type = PyObject_GetAttr(torch, names().Tensor);
    PyObject* strided = PyObject_GetAttr(torch, names().strided);
    Py_DECREF(torch);
    int r = (tensor_type && strided) ? take_torch_checked(v, tensor_type, strided, torch_dtype, want) : -1;
    Py_XDECREF(tensor_type);
    Py_XDECREF(strided);
    return r;
  }

  int take_torch_checked(PyObject* v, PyObject* tensor_type, PyObject* strided, PyObject* torch_dtype,
                         PyArray_Descr* want) {
    int is = PyObject_IsInstance(v, tensor_type);
    if (is != 1) return is;
    if (attr_is(v, names().is_cpu, Py_True) != 1 || attr_is(v, names().layout, strided) != 1 ||
        attr_is(v, names().dtype, torch_dtype) != 1)
      return PyErr_Occurred() ? -1 : 0;
    PyObject* neg = PyObject_CallMethodNoArgs(v, names().is_neg);
    if (neg == nullptr) return -1;
    Py_DECREF(neg);
    if (neg != Py_False) return 0;
    PyObject* size = PyObject_GetAttr(v, names().shape);
    PyObject* stride = size ? PyObject_CallMethodNoArgs(v, names().stride) : nullptr;
    PyObject* ptr = stride ? PyObject_CallMethodNoArgs(v, names().data_ptr) : nullptr;
    int r = -1;
    if (ptr != nullptr && PyTuple_Check(size) && PyTuple_Check(stride)) {
      const Py_ssize_t nd = PyTuple_GET_SIZE(size);
      r = nd <= OPGEN_MAX_DIMS && PyTuple_GET_SIZE(stride) == nd ? 1 : 0;
      for (Py_ssize_t d = 0; r == 1 && d < nd; ++d) {
        shape[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(size, d));
        strides[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(stride, d));
      }
      void* data = PyLong_AsVoidPtr(ptr);
      if (PyErr_Occurred()) r = -1;
      if (r == 1) {
        held.hold(v);
        fill(data, static_cast<int>(nd), want);
      }
    }
    Py_XDECREF(size);
    Py_XDECREF(stride);
    Py_XDECREF(ptr);
    return r;
  }

  static int attr_is(PyObject* v, PyObject* name, PyObject* expected) {
    PyObject* got = PyObject_GetAttr(v, name);
    if (got == nullptr) return -1;
    Py_DECREF(got);
    return got == expected;
  }

  void fill(void* data, int nd, PyArray_Descr* dt) {
    view.data = data;
    view.device = opgen_device{1 /* kDLCPU */, 0};
    view.ndim = nd;
    view.dtype = dtype_of(dt);
    view.shape = shape;
    view.strides = strides;
    view.byte_offset = 0;
  }

  static opgen_dtype dtype_of(PyArray_Descr* dt) {
    // DLPack codes (opgen/spec/dtypes.py): 0 int, 1 uint, 2 float, 4 bfloat, 6 bool.
    const uint8_t bits = static_cast<uint8_t>(PyDataType_ELSIZE(dt) * 8);
    switch (dt->kind) {
      case 'i': return opgen_dtype{0, bits, 1};
      case 'u': return opgen_dtype{1, bits, 1};
      case 'f': return opgen_dtype{2, bits, 1};
      case 'b': return opgen_dtype{6, bits, 1};
      default: return opgen_dtype{4, bits, 1};  // ml_dtypes' bfloat16 (kind 'V'): the only other dtype opgen has
    }
  }

  const opgen_tensor* ptr() const { return &view; }

  struct Names {
    PyObject *torch, *Tensor, *strided, *is_cpu, *layout, *dtype, *is_neg, *shape, *stride, *data_ptr;
  };
  static const Names& names() {
    static Names n{PyUnicode_InternFromString("torch"),  PyUnicode_InternFromString("Tensor"),
                   PyUnicode_InternFromString("strided"), PyUnicode_InternFromString("is_cpu"),
                   PyUnicode_InternFromString("layout"), PyUnicode_InternFromString("dtype"),
                   PyUnicode_InternFromString("is_neg"), PyUnicode_InternFromString("shape"),
                   PyUnicode_InternFromString("stride"), PyUnicode_InternFromString("data_ptr")};
    return n;
  }
};

// One argument: taken by the C side, or else converted by the host (which raises as the ctypes
// host does) and then taken. Returns false with a Python error set.
template <class Arg>
bool take(State& st, Py_ssize_t index, PyObject* value, Arg& arg) {
  int r = arg.take(st, index, value);
  if (r == 1) return true;
  if (r < 0) return false;
  PyObject* plain = PyObject_CallFunction(st.coerce, "nO", index, value);
  if (plain == nullptr) return false;
  r = arg.take(st, index, plain);
  Py_DECREF(plain);  // what take() points into it holds itself
  if (r == 0)
    PyErr_Format(PyExc_SystemError, "%U: the host's conversion of argument %zd gave a value the native entry cannot take",
                 st.function, index);
  return r == 1;
}

// Positions, keywords and defaults as Signature.bind with apply_defaults binds them; anything
// else (too many, unknown or repeated names, a missing value) goes to Signature.bind itself, for
// Python's own TypeError. `values` receives borrowed references; `owner` keeps them alive.
inline bool bind(State& st, PyObject* const* args, size_t nargsf, PyObject* kwnames, PyObject** values,
                 PyObject*& owner) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  bool ok = nargs <= st.nparams;
  for (Py_ssize_t i = 0; ok && i < st.nparams; ++i) values[i] = i < nargs ? args[i] : nullptr;
  for (Py_ssize_t k = 0; ok && k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    Py_ssize_t found = -1;
    for (Py_ssize_t i = 0; i < st.nparams && found < 0; ++i)
      if (PyTuple_GET_ITEM(st.names, i) == key) found = i;
    for (Py_ssize_t i = 0; i < st.nparams && found < 0; ++i) {
      int eq = PyUnicode_Compare(PyTuple_GET_ITEM(st.names, i), key);
      if (eq == -1 && PyErr_Occurred()) return false;
      if (eq == 0) found = i;
    }
    if (found < 0 || values[found] != nullptr) ok = false;
    else values[found] = args[nargs + k];
  }
  for (Py_ssize_t i = 0; ok && i < st.nparams; ++i) {
    if (values[i] != nullptr) continue;
    PyObject* d = PyTuple_GET_ITEM(st.defaults, i);
    if (d == st.missing) ok = false;
    else values[i] = d;
  }
  if (ok) return true;
  PyObject* positional = PyTuple_New(nargs);
  PyObject* keywords = positional ? PyDict_New() : nullptr;
  if (keywords == nullptr) {
    Py_XDECREF(positional);
    return false;
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(positional, i, args[i]);
  }
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    if (PyDict_SetItem(keywords, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]) < 0) {
      Py_DECREF(positional);
      Py_DECREF(keywords);
      return false;
    }
  }
  PyObject* bound = PyObject_CallFunctionObjArgs(st.bind, positional, keywords, nullptr);
  Py_DECREF(positional);
  Py_DECREF(keywords);
  if (bound == nullptr) return false;
  if (!PyTuple_Check(bound) || PyTuple_GET_SIZE(bound) != st.nparams) {
    Py_DECREF(bound);
    PyErr_SetString(PyExc_SystemError, "the host's bind() must give one value per parameter");
    return false;
  }
  for (Py_ssize_t i = 0; i < st.nparams; ++i) values[i] = PyTuple_GET_ITEM(bound, i);
  owner = bound;
  return true;
}

// A nonzero status as the ctypes host raises it: the class the status names, the kernel's message.
inline PyObject* raise_status(State& st, int32_t status, const opgen_error& err) {
  PyObject* key = PyLong_FromLong(status);
  if (key == nullptr) return nullptr;
  PyObject* cls = PyDict_GetItemWithError(st.errors, key);
  Py_DECREF(key);
  if (cls == nullptr && PyErr_Occurred()) return nullptr;
  if (cls == nullptr) cls = st.kernel_error;
  const size_t len = strnlen(err.message, sizeof err.message);
  // statuses from 6 on are compiled code's own (a raise statement's may have an empty message, as Python's)
  PyObject* message = len || status >= 6 ? PyUnicode_DecodeUTF8(err.message, static_cast<Py_ssize_t>(len), "replace")
                          : PyUnicode_FromFormat("%U failed with status %d", st.function, static_cast<int>(status));
  if (message == nullptr) return nullptr;
  PyErr_SetObject(cls, message);
  Py_DECREF(message);
  return nullptr;
}

// ---------------------------------------------------------------- results
//
// Each out slot is converted (when every earlier one was: `ok`) and its malloc'ed memory released
// either way, so an error in one slot leaks none of the others.

inline PyObject* int_out(bool& ok, int64_t v) { return ok ? PyLong_FromLongLong(v) : nullptr; }
inline PyObject* float_out(bool& ok, double v) { return ok ? PyFloat_FromDouble(v) : nullptr; }
inline PyObject* bool_out(bool& ok, uint8_t v) {
  if (!ok) return nullptr;
  PyObject* r = v ? Py_True : Py_False;
  Py_INCREF(r);
  return r;
}

inline PyObject* decoded(const char* data, int64_t len) {
  return PyUnicode_DecodeUTF8(data, static_cast<Py_ssize_t>(len), "strict");
}

inline PyObject* str_out(State& st, bool& ok, opgen_string& s) {
  PyObject* r = ok ? decoded(s.data, s.len) : nullptr;
  st.free_fn(s.data);
  ok = ok && r != nullptr;
  return r;
}

template <class Elem>
PyObject* list_out(State& st, bool& ok, opgen_list& l) {
  PyObject* r = ok ? PyList_New(static_cast<Py_ssize_t>(l.len)) : nullptr;
  const Elem* items = static_cast<const Elem*>(l.data);
  for (int64_t i = 0; r != nullptr && i < l.len; ++i) {
    PyObject* item;
    if constexpr (std::is_same_v<Elem, opgen_string>) item = decoded(items[i].data, items[i].len);
    else if constexpr (std::is_same_v<Elem, int64_t>) item = PyLong_FromLongLong(items[i]);
    else if constexpr (std::is_same_v<Elem, double>) item = PyFloat_FromDouble(items[i]);
    else {
      item = items[i] ? Py_True : Py_False;
      Py_INCREF(item);
    }
    if (item == nullptr) {
      Py_CLEAR(r);
      break;
    }
    PyList_SET_ITEM(r, static_cast<Py_ssize_t>(i), item);
  }
  st.free_fn(l.data);
  ok = ok && r != nullptr;
  return r;
}

// The library's buffer, released with opgen_free when the array (and every view of it) is gone.
struct Release {
  static void destroy(PyObject* capsule) {
    auto free_fn = reinterpret_cast<void (*)(void*)>(PyCapsule_GetContext(capsule));
    free_fn(PyCapsule_GetPointer(capsule, "opgen.buffer"));
  }
};

inline PyObject* tensor_out(State& st, bool& ok, opgen_tensor& t, Py_ssize_t slot) {
  PyObject* r = nullptr;
  if (ok) {
    auto* want = reinterpret_cast<PyArray_Descr*>(PyTuple_GET_ITEM(st.result_dtypes, slot));
    const opgen_dtype have = TensorArg::dtype_of(want);
    if (have.code != t.dtype.code || have.bits != t.dtype.bits) {
      PyErr_Format(PyExc_SystemError, "%U returned a tensor of DLPack code %d, %d bits, where its manifest says %R",
                   st.function, t.dtype.code, t.dtype.bits, want);
    } else {
      npy_intp count = 1;
      for (int d = 0; d < t.ndim; ++d) count *= static_cast<npy_intp>(t.shape[d]);
      Py_INCREF(want);  // PyArray_NewFromDescr steals it
      if (count == 0) {
        r = PyArray_NewFromDescr(&PyArray_Type, want, t.ndim, reinterpret_cast<npy_intp*>(t.shape), nullptr,
                                 nullptr, 0, nullptr);
      } else {
        r = PyArray_NewFromDescr(&PyArray_Type, want, t.ndim, reinterpret_cast<npy_intp*>(t.shape), nullptr,
                                 t.data, NPY_ARRAY_CARRAY, nullptr);
        PyObject* owner = r ? PyCapsule_New(t.data, "opgen.buffer", Release::destroy) : nullptr;
        if (owner != nullptr && PyCapsule_SetContext(owner, reinterpret_cast<void*>(st.free_fn)) == 0 &&
            PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(r), owner) == 0) {
          t.data = nullptr;  // the array owns it now
        } else {
          if (owner != nullptr) {
            PyCapsule_SetDestructor(owner, nullptr);
            Py_DECREF(owner);
          }
          Py_CLEAR(r);
        }
      }
      if (r != nullptr && st.from_numpy != Py_None) {
        PyObject* torch_tensor = PyObject_CallOneArg(st.from_numpy, r);
        Py_DECREF(r);
        r = torch_tensor;
      }
    }
  }
  if (t.data != nullptr) st.free_fn(t.data);
  st.free_fn(t.shape);
  ok = ok && r != nullptr;
  return r;
}

// A dict result from its two slots (keys, values), as dict(zip(keys, values)).
inline PyObject* dict_out(bool& ok, PyObject* keys, PyObject* values) {
  PyObject* r = ok ? PyDict_New() : nullptr;
  for (Py_ssize_t i = 0; r != nullptr && i < PyList_GET_SIZE(keys); ++i)
    if (PyDict_SetItem(r, PyList_GET_ITEM(keys, i), PyList_GET_ITEM(values, i)) < 0) Py_CLEAR(r);
  Py_XDECREF(keys);
  Py_XDECREF(values);
  ok = ok && r != nullptr;
  return r;
}

// A tuple result from its items (references stolen).
inline PyObject* tuple_out(bool& ok, std::initializer_list<PyObject*> items) {
  PyObject* r = ok ? PyTuple_New(static_cast<Py_ssize_t>(items.size())) : nullptr;
  Py_ssize_t i = 0;
  for (PyObject* item : items) {
    if (r != nullptr) PyTuple_SET_ITEM(r, i++, item);
    else Py_XDECREF(item);
  }
  ok = ok && r != nullptr;
  return r;
}

// ---------------------------------------------------------------- the bound function object

struct Entry {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  State st;
};

using Call = PyObject* (*)(State&, PyObject* const* values);
inline Call& generated_call() {
  static Call call = nullptr;
  return call;
}

inline PyObject* entry_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  State& st = reinterpret_cast<Entry*>(self)->st;
  PyObject* stack[64];
  std::vector<PyObject*> heap;
  PyObject** values = stack;
  if (st.nparams > 64) {
    heap.resize(static_cast<size_t>(st.nparams));
    values = heap.data();
  }
  PyObject* owner = nullptr;
  if (!bind(st, args, nargsf, kwnames, values, owner)) return nullptr;
  PyObject* r = generated_call()(st, values);
  Py_XDECREF(owner);
  return r;
}

// entry.pointers(*args, **kwargs): the data address each tensor argument would cross with (None for
// the other parameters), bound and taken as a call takes them, the library not called: shows
// that arrays and tensors go in as views of their own memory.
inline PyObject* entry_pointers(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  State& st = reinterpret_cast<Entry*>(self)->st;
  std::vector<PyObject*> values(static_cast<size_t>(st.nparams));
  PyObject* owner = nullptr;
  if (!bind(st, args, static_cast<size_t>(nargs), kwnames, values.data(), owner)) return nullptr;
  PyObject* r = PyTuple_New(st.nparams);
  for (Py_ssize_t i = 0; r != nullptr && i < st.nparams; ++i) {
    PyObject* item = Py_None;
    Py_INCREF(item);
    if (PyTuple_GET_ITEM(st.param_dtypes, i) != Py_None) {
      TensorArg arg;
      Py_DECREF(item);
      item = take(st, i, values[static_cast<size_t>(i)], arg) ? PyLong_FromVoidPtr(arg.view.data) : nullptr;
    }
    if (item == nullptr) Py_CLEAR(r);
    else PyTuple_SET_ITEM(r, i, item);
  }
  Py_XDECREF(owner);
  return r;
}

inline PyMethodDef* entry_methods() {
  static PyMethodDef methods[] = {
      {"pointers", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(entry_pointers)),
       METH_FASTCALL | METH_KEYWORDS, "the data address each tensor argument crosses with"},
      {nullptr, nullptr, 0, nullptr}};
  return methods;
}

inline void entry_dealloc(PyObject* self) {
  State& st = reinterpret_cast<Entry*>(self)->st;
  for (PyObject* o : {st.names, st.defaults, st.missing, st.coerce, st.bind, st.errors, st.kernel_error,
                      st.param_dtypes, st.torch_dtypes, st.result_dtypes, st.from_numpy, st.function})
    Py_XDECREF(o);
  PyObject_Free(self);
}

inline PyTypeObject& entry_type() {
  static PyTypeObject type = [] {
    PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
    t.tp_name = "opgen.NativeEntry";
    t.tp_basicsize = sizeof(Entry);
    t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL;
    t.tp_vectorcall_offset = offsetof(Entry, vectorcall);
    t.tp_call = PyVectorcall_Call;
    t.tp_dealloc = entry_dealloc;
    t.tp_doc = "A compiled function's native entry (bound by opgen.host).";
    t.tp_methods = entry_methods();
    return t;
  }();
  return type;
}

// bind(library, symbol, names, defaults, missing, coerce, bind, errors, kernel_error, param_dtypes,
//      torch_dtypes, result_dtypes, from_numpy, function) -> the callable entry.
inline PyObject* bind_entry(PyObject*, PyObject* args) {
  const char *library, *symbol;
  State st;
  if (!PyArg_ParseTuple(args, "ssO!O!OOOO!OO!O!O!OU:bind", &library, &symbol, &PyTuple_Type, &st.names, &PyTuple_Type,
                        &st.defaults, &st.missing, &st.coerce, &st.bind, &PyDict_Type, &st.errors, &st.kernel_error,
                        &PyTuple_Type, &st.param_dtypes, &PyTuple_Type, &st.torch_dtypes, &PyTuple_Type,
                        &st.result_dtypes, &st.from_numpy, &st.function))
    return nullptr;
  st.nparams = PyTuple_GET_SIZE(st.names);
  if (PyTuple_GET_SIZE(st.defaults) != st.nparams || PyTuple_GET_SIZE(st.param_dtypes) != st.nparams ||
      PyTuple_GET_SIZE(st.torch_dtypes) != st.nparams) {
    PyErr_SetString(PyExc_ValueError, "bind: names, defaults and dtypes must have one item per parameter");
    return nullptr;
  }
  // The host has loaded the library (ctypes) already; this only finds it again, by its path.
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return PyErr_Format(PyExc_ImportError, "cannot load %s: %s", library, dlerror());
  st.entry = dlsym(handle, symbol);
  st.free_fn = reinterpret_cast<void (*)(void*)>(dlsym(handle, "opgen_free"));
  if (st.entry == nullptr || st.free_fn == nullptr)
    return PyErr_Format(PyExc_ImportError, "%s does not export %s and opgen_free", library, symbol);
  if (PyType_Ready(&entry_type()) < 0) return nullptr;
  Entry* e = PyObject_New(Entry, &entry_type());
  if (e == nullptr) return nullptr;
  e->vectorcall = entry_vectorcall;
  for (PyObject* o : {st.names, st.defaults, st.missing, st.coerce, st.bind, st.errors, st.kernel_error,
                      st.param_dtypes, st.torch_dtypes, st.result_dtypes, st.from_numpy, st.function})
    Py_INCREF(o);
  new (&e->st) State(st);
  return reinterpret_cast<PyObject*>(e);
}

}  // namespace opgen::pyentry

// The module: one function, bind(); the generated file defines the call and names the module.
#define OPGEN_PYTHON_ENTRY_MODULE(NAME, CALL)                                                          \
  static PyMethodDef opgen_entry_methods[] = {                                                         \
      {"bind", opgen::pyentry::bind_entry, METH_VARARGS, "bind the compiled library's entry point"},   \
      {nullptr, nullptr, 0, nullptr}};                                                                 \
  static PyModuleDef opgen_entry_module = {PyModuleDef_HEAD_INIT, #NAME, nullptr, -1, opgen_entry_methods}; \
  PyMODINIT_FUNC PyInit_##NAME(void) {                                                                 \
    import_array();                                                                                    \
    opgen::pyentry::generated_call() = CALL;                                                           \
    return PyModule_Create(&opgen_entry_module);                                                       \
  }

#endif
