"""The data the examples carry: MNIST and Tiny Shakespeare load with the facts of
/work/shared/data/README.md, and a missing or corrupt file is a clear error naming it."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from example_support import data

TRAIN_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
TEST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


@pytest.fixture(scope="module")
def mnist() -> data.MNIST:
    return data.load_mnist()


def test_mnist_split_shapes_and_dtypes(mnist):
    for split, n in ((mnist.train, 55_000), (mnist.val, 5_000), (mnist.test, 10_000)):
        assert split.x.shape == (n, 784) and split.x.dtype == np.float32
        assert split.y.shape == (n,) and split.y.dtype == np.int64
        assert split.x.min() == 0.0 and split.x.max() == 1.0


def test_mnist_first_labels(mnist):
    assert mnist.train.y[0] == 5
    assert mnist.test.y[0] == 7


def test_mnist_label_counts(mnist):
    all_train = np.concatenate([mnist.train.y, mnist.val.y])
    assert np.bincount(all_train, minlength=10).tolist() == TRAIN_COUNTS
    assert np.bincount(mnist.test.y, minlength=10).tolist() == TEST_COUNTS


def test_mnist_pixel_mean_and_std(mnist):
    pixels = np.concatenate([mnist.train.x, mnist.val.x]).astype(np.float64)
    assert pixels.mean() == pytest.approx(0.130660, abs=5e-7)
    assert pixels.std() == pytest.approx(0.308108, abs=5e-7)


def test_validation_is_the_last_5000_training_images(mnist):
    with np.load(data.DATA_DIR / "mnist.npz") as f:
        raw_x, raw_y = f["x_train"], f["y_train"]
    np.testing.assert_array_equal(mnist.val.x, raw_x[55_000:].reshape(5_000, 784) / np.float32(255))
    np.testing.assert_array_equal(mnist.val.y, raw_y[55_000:])
    np.testing.assert_array_equal(mnist.train.y, raw_y[:55_000])


def test_shakespeare_facts():
    text = data.load_shakespeare()
    assert len(text) == 1_115_394
    assert len(set(text)) == 65
    assert text.startswith("First Citizen:\n")


@pytest.mark.parametrize("name", sorted(data.CHECKSUMS))
def test_corrupt_copy_is_refused_naming_the_file(tmp_path, name):
    copy = tmp_path / name
    shutil.copyfile(data.DATA_DIR / name, copy)
    raw = bytearray(copy.read_bytes())
    raw[len(raw) // 2] ^= 0x01  # one bit
    copy.write_bytes(bytes(raw))
    with pytest.raises(data.DataError, match="corrupt") as excinfo:
        data.verified_path(name, tmp_path)
    assert str(copy) in str(excinfo.value) and data.CHECKSUMS[name] in str(excinfo.value)


def test_corrupt_mnist_is_refused_by_the_loader(tmp_path):
    copy = tmp_path / "mnist.npz"
    raw = bytearray((data.DATA_DIR / "mnist.npz").read_bytes())
    raw[-100] ^= 0xFF
    copy.write_bytes(bytes(raw))
    with pytest.raises(data.DataError, match="mnist.npz"):
        data.load_mnist(tmp_path)


def test_missing_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(data.DataError, match="tinyshakespeare.txt.*missing"):
        data.load_shakespeare(tmp_path)


def test_intact_copy_elsewhere_loads(tmp_path):
    shutil.copyfile(data.DATA_DIR / "tinyshakespeare.txt", tmp_path / "tinyshakespeare.txt")
    assert data.load_shakespeare(tmp_path) == data.load_shakespeare()
