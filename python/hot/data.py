"""Image classification data for the training runner: Fashion-MNIST as Debian ships it.

The Debian package ``dataset-fashion-mnist`` (installed by ``scripts/setup.sh``) holds the
original IDX files (60 000 training and 10 000 test images, 28x28 uint8, labels 0..9)::

    /usr/share/datasets/fashion-mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz

``$HOT_FASHION_MNIST_DIR`` overrides the directory.  Plain (uncompressed) IDX files are read too.

    from hot import data
    ds = data.load("fashion-mnist", "train", subset=20000, seed=0)   # Dataset
    ds.images   # float32 (N, 784), in [0, 1] (normalize=True: (x - mean) / std)
    ds.labels   # int64 (N,)

Subset selection is deterministic: ``subset=N`` takes the first ``N`` entries of a permutation
drawn from ``numpy.random.default_rng(seed)``, so that every mode of a comparison sees the same
images.  :func:`epoch_order` gives the (seeded) order of an epoch.
"""

from __future__ import annotations

import gzip
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Union

import numpy as np

__all__ = ["DatasetMissing", "Dataset", "read_idx", "fashion_mnist_dir", "load", "epoch_order",
           "one_hot", "FASHION_MNIST_CLASSES", "MEAN", "STD"]

DEBIAN_DIR = Path("/usr/share/datasets/fashion-mnist")
PACKAGE = "dataset-fashion-mnist"
FASHION_MNIST_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal",
                         "Shirt", "Sneaker", "Bag", "Ankle boot")
# Mean and standard deviation of the 60k training pixels scaled to [0, 1].
MEAN, STD = 0.2860, 0.3530

_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
# IDX type codes -> numpy big-endian dtypes.
_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


class DatasetMissing(FileNotFoundError):
    """The data set's files are not installed."""


def read_idx(path: Union[str, os.PathLike]) -> np.ndarray:
    """Read one IDX file (gzip-compressed if it starts with the gzip magic)."""
    path = Path(path)
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{path}: not an IDX file (bad magic {raw[:4]!r})")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_TYPES:
        raise ValueError(f"{path}: unknown IDX element type 0x{code:02x}")
    dims = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
    dtype = np.dtype(_IDX_TYPES[code])
    count = int(np.prod(dims, dtype=np.int64))
    offset = 4 + 4 * ndim
    if len(raw) - offset != count * dtype.itemsize:
        raise ValueError(f"{path}: {len(raw) - offset} data bytes, expected "
                         f"{count * dtype.itemsize} for shape {dims}")
    return np.frombuffer(raw, dtype=dtype, count=count, offset=offset).reshape(dims) \
        .astype(dtype.newbyteorder("="))


def fashion_mnist_dir() -> Path:
    """Directory of the IDX files; raises :class:`DatasetMissing` with how to install them."""
    d = Path(os.environ.get("HOT_FASHION_MNIST_DIR", DEBIAN_DIR))
    for images, labels in _FILES.values():
        for stem in (images, labels):
            if not ((d / f"{stem}.gz").is_file() or (d / stem).is_file()):
                raise DatasetMissing(
                    f"Fashion-MNIST not found: {d / stem}[.gz] is missing. Install Debian's "
                    f"package with `sudo apt-get install {PACKAGE}` (scripts/setup.sh does) or "
                    f"set HOT_FASHION_MNIST_DIR to a directory holding the IDX files.")
    return d


def _idx_file(d: Path, stem: str) -> Path:
    gz = d / f"{stem}.gz"
    return gz if gz.is_file() else d / stem


@dataclass
class Dataset:
    images: np.ndarray  # float32 (N, 784)
    labels: np.ndarray  # int64 (N,)
    name: str
    split: str

    def __len__(self) -> int:
        return len(self.labels)


_cache: dict = {}


def _raw(split: str) -> tuple[np.ndarray, np.ndarray]:
    if split not in _cache:
        d = fashion_mnist_dir()
        img_stem, lab_stem = _FILES[split]
        images = read_idx(_idx_file(d, img_stem))
        labels = read_idx(_idx_file(d, lab_stem))
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise ValueError(f"fashion-mnist {split}: unexpected shapes {images.shape}, "
                             f"{labels.shape}")
        _cache[split] = (images, labels)
    return _cache[split]


def load(name: str = "fashion-mnist", split: str = "train", *, subset: Optional[int] = None,
         seed: int = 0, normalize: bool = False,
         classes: Optional[Iterable[int]] = None) -> Dataset:
    """Images as float32 (N, 784) in [0, 1] (``normalize``: standardized with MEAN/STD) and
    int64 labels.  ``classes``: only the images of these labels (labels keep their values).
    ``subset``: a seeded random subset of that size (of the images ``classes`` keeps)."""
    if name != "fashion-mnist":
        raise ValueError(f"unknown data set {name!r} (available: fashion-mnist)")
    if split not in _FILES:
        raise ValueError(f"unknown split {split!r} (train or test)")
    images, labels = _raw(split)
    idx = np.arange(len(labels))
    if classes is not None:
        keep = np.array(sorted(set(classes)), dtype=np.int64)
        if keep.size == 0 or keep.min() < 0 or keep.max() >= len(FASHION_MNIST_CLASSES):
            raise ValueError(f"classes must be labels in 0..{len(FASHION_MNIST_CLASSES) - 1}, "
                             f"got {list(classes)}")
        idx = idx[np.isin(labels, keep)]
    if subset is not None and subset < len(idx):
        if subset <= 0:
            raise ValueError(f"subset must be positive, got {subset}")
        idx = np.sort(idx[np.random.default_rng(seed).permutation(len(idx))[:subset]])
    x = images[idx].reshape(len(idx), -1).astype(np.float32) / np.float32(255.0)
    if normalize:
        x = (x - np.float32(MEAN)) / np.float32(STD)
    return Dataset(np.ascontiguousarray(x, dtype=np.float32), labels[idx].astype(np.int64),
                   name, split)


def epoch_order(n: int, seed: int, epoch: int) -> np.ndarray:
    """The order of the samples in epoch ``epoch`` (deterministic in seed and epoch)."""
    return np.random.default_rng([seed, epoch, 0x5EED]).permutation(n)


def one_hot(labels: np.ndarray, classes: int = 10) -> np.ndarray:
    out = np.zeros((len(labels), classes), dtype=np.float32)
    out[np.arange(len(labels)), labels] = 1.0
    return out
