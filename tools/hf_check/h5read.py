"""HDF5 reading for tools/hf_check: h5py when importable, else libhdf5 itself through ctypes (the
GPU machine's Python may lack h5py; the device bundle's env.sh puts Debian's libhdf5 on
LD_LIBRARY_PATH). READER ("auto", "h5py" or "ctypes") is set by hf_check.py's --h5-reader."""
import ctypes
import ctypes.util
import glob
import os

from common import CheckError


class H5pyFile:
    def __init__(self, path):
        import h5py
        self.f = h5py.File(path, "r")

    def array(self, name):
        import numpy as np
        return np.asarray(self.f[name][()])

    def strings(self, name):
        return [s for s in self.f[name].asstr()[()]]

    def attr(self, name):
        v = self.f.attrs[name]
        return v.decode() if isinstance(v, bytes) else v

    def close(self):
        self.f.close()


class CtypesH5:
    """The few libhdf5 calls needed to read numeric datasets, string datasets and scalar string
    attributes (HDF5 1.10: hid_t is int64)."""
    lib = None

    @classmethod
    def load(cls):
        if cls.lib is not None:
            return cls.lib
        names = ["libhdf5_openmpi.so.103", "libhdf5_serial.so.103", "libhdf5.so.103",
                 "libhdf5_openmpi.so", "libhdf5_serial.so", "libhdf5.so"]
        found = ctypes.util.find_library("hdf5")
        if found:
            names.append(found)
        for root in ("/tmp/abl-root/usr/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"):
            names += sorted(glob.glob(os.path.join(root, "libhdf5*.so*")))
        errors = []
        for n in names:
            try:
                lib = ctypes.CDLL(n)
                lib.H5open()
                break
            except OSError as e:
                errors.append(str(e))
        else:
            raise CheckError("no h5py and no loadable libhdf5 (" + "; ".join(errors[:3]) + ")")
        hid, herr = ctypes.c_int64, ctypes.c_int
        for fn, res, args in [
            ("H5Fopen", hid, [ctypes.c_char_p, ctypes.c_uint, hid]),
            ("H5Fclose", herr, [hid]),
            ("H5Dopen2", hid, [hid, ctypes.c_char_p, hid]),
            ("H5Dclose", herr, [hid]),
            ("H5Dget_space", hid, [hid]),
            ("H5Dread", herr, [hid, hid, hid, hid, hid, ctypes.c_void_p]),
            ("H5Sget_simple_extent_ndims", ctypes.c_int, [hid]),
            ("H5Sget_simple_extent_dims", ctypes.c_int, [hid, ctypes.c_void_p, ctypes.c_void_p]),
            ("H5Sclose", herr, [hid]),
            ("H5Aopen", hid, [hid, ctypes.c_char_p, hid]),
            ("H5Aread", herr, [hid, hid, ctypes.c_void_p]),
            ("H5Aclose", herr, [hid]),
            ("H5Tcopy", hid, [hid]),
            ("H5Tset_size", herr, [hid, ctypes.c_size_t]),
            ("H5Tset_cset", herr, [hid, ctypes.c_int]),
            ("H5Tclose", herr, [hid]),
        ]:
            f = getattr(lib, fn)
            f.restype, f.argtypes = res, args
        cls.lib = lib
        return lib


class CtypesFile:
    def __init__(self, path):
        self.h5 = CtypesH5.load()
        self.path = path
        self.fid = self.h5.H5Fopen(path.encode(), 0, 0)  # H5F_ACC_RDONLY, H5P_DEFAULT
        if self.fid < 0:
            raise CheckError("%s: H5Fopen failed" % path)

    def _global(self, name):
        return ctypes.c_int64.in_dll(self.h5, name).value

    def _open(self, name):
        d = self.h5.H5Dopen2(self.fid, name.encode(), 0)
        if d < 0:
            raise CheckError("%s: no dataset %s" % (self.path, name))
        s = self.h5.H5Dget_space(d)
        n = self.h5.H5Sget_simple_extent_ndims(s)
        dims = (ctypes.c_uint64 * max(n, 1))()
        self.h5.H5Sget_simple_extent_dims(s, dims, None)
        self.h5.H5Sclose(s)
        return d, tuple(dims[i] for i in range(n))

    def _string_type(self):
        t = self.h5.H5Tcopy(self._global("H5T_C_S1_g"))
        self.h5.H5Tset_size(t, ctypes.c_size_t(-1).value)  # H5T_VARIABLE
        self.h5.H5Tset_cset(t, 1)  # H5T_CSET_UTF8
        return t

    def array(self, name):
        import numpy as np
        d, shape = self._open(name)
        kind = {"/kl/logprobs": ("H5T_NATIVE_FLOAT_g", np.float32)}.get(name)
        if kind is None:
            kind = ("H5T_NATIVE_LLONG_g", np.int64) if name.endswith("n_tokens") else (
                ("H5T_NATIVE_DOUBLE_g", np.float64) if name.endswith("mean") else ("H5T_NATIVE_FLOAT_g", np.float32))
        out = np.empty(shape, dtype=kind[1])
        if self.h5.H5Dread(d, self._global(kind[0]), 0, 0, 0, out.ctypes.data) < 0:
            raise CheckError("%s: H5Dread %s failed" % (self.path, name))
        self.h5.H5Dclose(d)
        return out

    def strings(self, name):
        d, shape = self._open(name)
        buf = (ctypes.c_char_p * shape[0])()
        t = self._string_type()
        if self.h5.H5Dread(d, t, 0, 0, 0, buf) < 0:
            raise CheckError("%s: H5Dread %s failed" % (self.path, name))
        self.h5.H5Tclose(t)
        self.h5.H5Dclose(d)
        return [b.decode() if b is not None else "" for b in buf]

    def attr(self, name):
        a = self.h5.H5Aopen(self.fid, name.encode(), 0)
        if a < 0:
            raise CheckError("%s: no attribute %s" % (self.path, name))
        t = self._string_type()
        p = ctypes.c_char_p()
        if self.h5.H5Aread(a, t, ctypes.byref(p)) < 0:
            raise CheckError("%s: H5Aread %s failed (not a string attribute?)" % (self.path, name))
        self.h5.H5Tclose(t)
        self.h5.H5Aclose(a)
        return (p.value or b"").decode()

    def close(self):
        self.h5.H5Fclose(self.fid)


READER = "auto"


def open_h5(path):
    if READER in ("auto", "h5py"):
        try:
            return H5pyFile(path)
        except ImportError:
            if READER == "h5py":
                raise CheckError("h5py is not importable")
    return CtypesFile(path)
