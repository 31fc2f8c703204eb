"""autograd_core.utils.data against torch.utils.data: datasets, samplers, collation, random
splits and the DataLoader, in the main process and in worker processes.

Worker tests use tiny datasets of host (numpy) data and the platform's default start method
(fork on Linux, cheap); one test starts its worker by "spawn". Batches are compared with
PyTorch's own DataLoader where PyTorch defines the result (orders, structures, lengths,
errors) and with ``num_workers=0`` where the result is ours (random orders).
"""

from __future__ import annotations

import collections
import doctest
import importlib
import operator
import time

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import autograd_core as ag
import backends
import nn
import optim
from autograd_core.utils import data
from autograd_core.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)
from helpers import assert_close

# jax warns at every fork once it is imported (by the jax cases of this run); the forked
# workers here compute with numpy alone
pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")
Point = collections.namedtuple("Point", ["x", "y"])


# --- datasets the workers read (module level, so that a spawned worker can import them) -----
class Rows(Dataset):
    """Samples of every kind default_collate handles, from host data."""

    def __init__(self, n: int = 11) -> None:
        self.n = n

    def __getitem__(self, i: int) -> dict:
        return {"x": np.full(3, i, np.float32), "i": i, "f": i / 2, "name": f"s{i}", "p": Point(i, [i, -i])}

    def __len__(self) -> int:
        return self.n


class ShardsOf:
    """0..n-1, each worker yielding the numbers its id owns (read from `info`)."""

    info = staticmethod(get_worker_info)

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        worker = self.info()
        start, step = (0, 1) if worker is None else (worker.id, worker.num_workers)
        return iter(range(start, self.n, step))

    def __len__(self) -> int:
        return self.n


class Shards(ShardsOf, IterableDataset):
    pass


class TorchShards(ShardsOf, tdata.IterableDataset):
    info = staticmethod(tdata.get_worker_info)


class WhoAmI(Dataset):
    """Each sample says which worker read it, and with what seed."""

    def __getitem__(self, i: int) -> tuple:
        info = get_worker_info()
        return i, info.id, info.num_workers, info.seed

    def __len__(self) -> int:
        return 6


class FailsAt(Dataset):
    def __init__(self, bad: int, error: type[Exception] = KeyError) -> None:
        self.bad, self.error = bad, error

    def __getitem__(self, i: int) -> int:
        if i == self.bad:
            raise self.error(f"sample {i} is broken")
        return i

    def __len__(self) -> int:
        return 8


class Slow(Dataset):
    def __getitem__(self, i: int) -> int:
        time.sleep(1.5)
        return i

    def __len__(self) -> int:
        return 2


class Seeded:
    """The least a generator must have: PyTorch's manual_seed and initial_seed."""

    def manual_seed(self, seed: int) -> Seeded:
        self.seed = seed
        return self

    def initial_seed(self) -> int:
        return self.seed


def ours_generator():
    """autograd_core's own Generator (its draws come from its `rng`, a numpy Generator)."""
    return importlib.import_module("autograd_core.ops.random").Generator()


def fail_in_init(worker_id: int) -> None:
    raise ValueError(f"worker {worker_id} cannot start")


# --- comparing batches ---------------------------------------------------------------------
def plain(batch):
    """A batch of ours or PyTorch's as Python values, tensors as ("tensor", dtype, values),
    keeping the container types (a named tuple by its fields) so that structures compare."""
    if isinstance(batch, ag.Tensor):
        return "tensor", str(batch.dtype).rsplit(".", 1)[-1], batch.tolist()
    if isinstance(batch, torch.Tensor):
        return "tensor", str(batch.dtype).rsplit(".", 1)[-1], batch.tolist()
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch).__name__, {k: plain(v) for k, v in batch._asdict().items()}
    if isinstance(batch, dict):
        return {k: plain(v) for k, v in batch.items()}
    if isinstance(batch, list | tuple):
        return type(batch).__name__, [plain(v) for v in batch]
    return batch


def epochs(loader, count: int = 1) -> list:
    return [plain(batch) for _ in range(count) for batch in loader]


# --- collation -------------------------------------------------------------------------------
NESTED_SAMPLES = [
    [{"a": np.arange(3, dtype=np.float32) + i, "b": i, "c": [i * 1.5, "s"], "p": Point(np.int32(i), (i, True))}
     for i in range(3)],
    [(np.float64(i), np.bool_(i % 2), b"x") for i in range(4)],
    [[np.ones((2, 2), np.int16) * i, collections.OrderedDict(k=float(i))] for i in range(2)],
]  # fmt: skip


@pytest.mark.parametrize("samples", NESTED_SAMPLES, ids=["dicts", "numpy_scalars", "lists"])
def test_default_collate_matches_pytorch(backend, samples):
    ours = default_collate(samples)
    assert plain(ours) == plain(tdata.default_collate(samples))
    leaves = [ours["a"]] if isinstance(ours, dict) else [t for t in ours if isinstance(t, ag.Tensor)]
    assert all(t.backend.name == backend.name for t in leaves)


def test_default_collate_of_tensors_stacks_them(backend):
    rows = [ag.tensor([1.0, 2.0]), ag.tensor([3.0, 4.0])]
    batch = default_collate(rows)
    assert batch.shape == (2, 2) and batch.backend.name == backend.name
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([ag.ones(2), ag.ones(3)])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object(), object()])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])


@pytest.mark.parametrize(
    "sample",
    [np.array([0, 1]), Point(np.array(0), 3), [np.array([1.5]), "s"], (np.float32(2), 1), {"k": np.ones(2)}],
    ids=["array", "namedtuple", "list", "tuple", "dict"],
)
def test_default_convert_matches_pytorch(backend, sample):
    assert plain(default_convert(sample)) == plain(tdata.default_convert(sample))


# --- samplers --------------------------------------------------------------------------------
def test_sequential_and_batch_samplers_match_pytorch():
    assert list(SequentialSampler(range(5))) == list(tdata.SequentialSampler(range(5)))
    for size, drop in [(1, False), (2, False), (2, True), (3, True), (7, False)]:
        ours, theirs = BatchSampler(range(7), size, drop), tdata.BatchSampler(range(7), size, drop)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("make_generator", [Seeded, torch.Generator, ours_generator], ids=["duck", "torch", "ours"])
def test_random_sampler_is_a_fresh_permutation_each_time_reproducible_from_the_seed(make_generator):
    sampler = RandomSampler(range(20), generator=make_generator().manual_seed(3))
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == list(range(20)) and first != second
    again = RandomSampler(range(20), generator=make_generator().manual_seed(3))
    assert [list(again), list(again)] == [first, second]
    assert list(RandomSampler(range(20), generator=make_generator().manual_seed(4))) != first


def test_reseeding_our_generator_replays_the_orders():
    generator = ours_generator().manual_seed(11)
    loader = DataLoader(Rows(9), batch_size=4, shuffle=True, generator=generator)
    first = epochs(loader, 2)
    generator.manual_seed(11)
    assert epochs(loader, 2) == first


def test_random_sampler_with_replacement_and_num_samples():
    draws = list(RandomSampler(range(5), replacement=True, num_samples=1000, generator=Seeded().manual_seed(0)))
    assert len(draws) == 1000 and set(draws) == set(range(5))
    longer = list(RandomSampler(range(4), num_samples=10, generator=Seeded().manual_seed(0)))
    assert sorted(longer[:4]) == sorted(longer[4:8]) == [0, 1, 2, 3] and len(longer) == 10 and len(set(longer[8:])) == 2


def test_without_a_generator_the_global_seed_decides():
    ag.manual_seed(5)
    first = list(RandomSampler(range(30)))
    ag.manual_seed(5)
    assert list(RandomSampler(range(30))) == first
    assert list(RandomSampler(range(30))) != first


def test_subset_random_and_weighted_samplers():
    subset = list(SubsetRandomSampler([10, 20, 30, 40], generator=Seeded().manual_seed(1)))
    assert sorted(subset) == [10, 20, 30, 40]
    weights = [1.0, 2.0, 0.0, 7.0]
    draws = np.array(list(WeightedRandomSampler(weights, 20000, generator=Seeded().manual_seed(2))))
    frequencies = np.bincount(draws, minlength=4) / len(draws)
    np.testing.assert_allclose(frequencies, np.array(weights) / 10, atol=0.015)  # 3 sigma is below 0.01
    unique = list(WeightedRandomSampler(ag.tensor(weights), 3, replacement=False, generator=Seeded().manual_seed(2)))
    assert sorted(unique) == [0, 1, 3]
    with pytest.raises(RuntimeError, match="without replacement"):
        list(WeightedRandomSampler(weights, 4, replacement=False))


SAMPLER_ERRORS = [
    ("RandomSampler", (range(3),), {"replacement": 1}),
    ("RandomSampler", (range(3),), {"num_samples": 0}),
    ("WeightedRandomSampler", ([1.0, 2.0], 0), {}),
    ("WeightedRandomSampler", ([1.0, 2.0], 2), {"replacement": "yes"}),
    ("WeightedRandomSampler", ([[1.0, 2.0]], 2), {}),
    ("BatchSampler", (range(3), 0, False), {}),
    ("BatchSampler", (range(3), True, False), {}),
    ("BatchSampler", (range(3), 2, None), {}),
]


@pytest.mark.parametrize("name,args,kwargs", SAMPLER_ERRORS)
def test_sampler_errors_match_pytorch(name, args, kwargs):
    with pytest.raises(Exception) as theirs:
        getattr(tdata, name)(*args, **kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        getattr(data, name)(*args, **kwargs)
    assert str(ours.value) == str(theirs.value)


# --- datasets --------------------------------------------------------------------------------
def test_datasets_combine_as_in_pytorch(backend):
    parts = [list(range(3)), list(range(10, 15))]
    ours, theirs = ConcatDataset(parts), tdata.ConcatDataset(parts)
    assert [ours[i] for i in range(-8, 8)] == [theirs[i] for i in range(-8, 8)]
    assert ours.cumulative_sizes == theirs.cumulative_sizes and len(ours) == len(theirs)
    assert list(ChainDataset([Shards(2), Shards(3)])) == list(tdata.ChainDataset([TorchShards(2), TorchShards(3)]))
    assert [Subset("abcdef", [5, 1])[i] for i in range(2)] == ["f", "b"]
    assert StackDataset("ab", "cd")[1] == ("b", "d") and StackDataset(x="ab", y="cd")[0] == {"x": "a", "y": "c"}
    x, y = ag.arange(6.0).reshape(3, 2), ag.tensor([0, 1, 1])
    row, label = TensorDataset(x, y)[2]
    assert row.tolist() == [4.0, 5.0] and label.item() == 1 and row.backend.name == backend.name
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(x, ag.ones(2))
    with pytest.raises(ValueError, match="Size mismatch"):
        StackDataset("ab", "c")


@pytest.mark.parametrize("lengths", [[3, 8], [0.5, 0.3, 0.2], [0.25, 0.25, 0.25, 0.25]], ids=str)
def test_random_split_lengths_and_disjointness(lengths):
    ours = random_split(range(11), lengths, generator=Seeded().manual_seed(0))
    theirs = tdata.random_split(range(11), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    together = [i for s in ours for i in s]
    assert sorted(together) == list(range(11))
    again = random_split(range(11), lengths, generator=Seeded().manual_seed(0))
    assert [list(s) for s in again] == [list(s) for s in ours]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(11), [3, 3])


# --- the DataLoader in the main process ----------------------------------------------------------
@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (4, False), (4, True), (None, False)])
def test_loader_batches_and_length_match_pytorch(backend, batch_size, drop_last):
    ours = DataLoader(Rows(), batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(Rows(), batch_size=batch_size, drop_last=drop_last)
    assert epochs(ours) == epochs(theirs) and len(ours) == len(theirs)
    first = next(iter(ours))
    assert first["x"].backend.name == backend.name


def test_loader_length_of_an_iterable_dataset_matches_pytorch():
    for batch_size, drop_last in [(None, False), (3, False), (3, True)]:
        ours = DataLoader(Shards(10), batch_size=batch_size, drop_last=drop_last)
        theirs = tdata.DataLoader(TorchShards(10), batch_size=batch_size, drop_last=drop_last)
        assert len(ours) == len(theirs) and epochs(ours) == epochs(theirs)


def test_shuffling_differs_between_epochs_and_repeats_from_the_seed():
    def two_epochs(seed: int) -> list:
        loader = DataLoader(Rows(12), batch_size=4, shuffle=True, generator=Seeded().manual_seed(seed))
        return [b["i"].tolist() for _ in range(2) for b in loader]

    first = two_epochs(0)
    assert first[:3] != first[3:] and sorted(sum(first[:3], [])) == list(range(12))
    assert two_epochs(0) == first and two_epochs(1) != first


def test_custom_collate_and_batch_sampler():
    loader = DataLoader(Rows(5), batch_sampler=[[4, 0], [2]], collate_fn=lambda rows: [r["i"] for r in rows])
    assert list(loader) == [[4, 0], [2]] and len(loader) == 2


LOADER_ERRORS = [
    ({"shuffle": True, "sampler": [0, 1]}, "map"),
    ({"batch_sampler": [[0]], "batch_size": 2}, "map"),
    ({"batch_sampler": [[0]], "drop_last": True}, "map"),
    ({"batch_sampler": [[0]], "sampler": [0]}, "map"),
    ({"batch_size": None, "drop_last": True}, "map"),
    ({"num_workers": -1}, "map"),
    ({"timeout": -1}, "map"),
    ({"prefetch_factor": 2}, "map"),
    ({"persistent_workers": True}, "map"),
    ({"multiprocessing_context": "spawn"}, "map"),
    ({"num_workers": 1, "multiprocessing_context": "nonsense"}, "map"),
    ({"num_workers": 1, "multiprocessing_context": 3}, "map"),
    ({"shuffle": True}, "iterable"),
    ({"sampler": [0]}, "iterable"),
    ({"batch_sampler": [[0]]}, "iterable"),
]


@pytest.mark.parametrize("kwargs,kind", LOADER_ERRORS, ids=lambda v: str(v) if isinstance(v, dict) else v)
def test_bad_argument_combinations_raise_as_in_pytorch(kwargs, kind):
    with pytest.raises(Exception) as theirs:
        tdata.DataLoader(Rows(4) if kind == "map" else TorchShards(4), **kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        DataLoader(Rows(4) if kind == "map" else Shards(4), **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_fixed_attributes_cannot_change_after_init():
    loader = DataLoader(Rows(4))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        loader.batch_size = 3
    loader.num_workers = 0  # the others can


# --- worker processes ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [{"batch_size": 3}, {"batch_size": 4, "drop_last": True}, {"batch_size": None},
     {"batch_size": 2, "prefetch_factor": 1}],
    ids=str,
)  # fmt: skip
def test_workers_give_the_batches_of_the_main_process(options):
    expected = epochs(DataLoader(Rows(), **{k: v for k, v in options.items() if k != "prefetch_factor"}))
    assert epochs(DataLoader(Rows(), num_workers=2, **options)) == expected


def test_workers_give_batches_of_the_current_backend(backend):
    rows = np.arange(12.0).reshape(6, 2)
    loader = DataLoader(TensorDataset(rows, np.arange(6)), batch_size=4, num_workers=2)
    batches = list(loader)
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5]]
    assert all(t.backend.name == backend.name for b in batches for t in b)
    assert_close(batches[0][0], rows[:4])


def test_shuffled_workers_repeat_the_main_process_order_every_epoch():
    def run(workers: int, persistent: bool = False) -> list:
        options = {"num_workers": workers, "persistent_workers": persistent} if workers else {}
        loader = DataLoader(Rows(10), batch_size=3, shuffle=True, generator=Seeded().manual_seed(7), **options)
        return epochs(loader, 2)

    expected = run(0)
    assert run(2) == expected and run(2, persistent=True) == expected


def test_persistent_workers_start_afresh_after_an_epoch_left_early():
    loader = DataLoader(Rows(10), batch_size=3, shuffle=True, num_workers=2, persistent_workers=True)
    next(iter(loader))  # the other batches of this epoch are on their way when the next one starts
    batches = [b["i"].tolist() for b in loader]
    assert sorted(sum(batches, [])) == list(range(10)) and [len(b) for b in batches] == [3, 3, 3, 1]


@pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning")  # torch's, on two cores
@pytest.mark.parametrize("persistent", [False, True])
def test_an_iterable_dataset_splits_across_workers_as_in_pytorch(persistent):
    ours = DataLoader(Shards(11), batch_size=2, num_workers=3, persistent_workers=persistent)
    theirs = tdata.DataLoader(TorchShards(11), batch_size=2, num_workers=3, persistent_workers=persistent)
    assert epochs(ours, 2) == epochs(theirs, 2)


def test_worker_info_seeds_and_init_fn():
    started = DataLoader(WhoAmI(), batch_size=None, num_workers=2, generator=Seeded().manual_seed(0))
    rows = [tuple(int(v) for v in row) for row in started]
    assert [r[:3] for r in rows] == [(i, i % 2, 2) for i in range(6)]
    seeds = {r[1]: r[3] for r in rows}
    assert seeds[1] == seeds[0] + 1
    assert get_worker_info() is None


@pytest.mark.parametrize("error", [KeyError, ValueError, ZeroDivisionError])
def test_a_worker_exception_is_raised_here_with_its_traceback(error):
    with pytest.raises(error) as caught:
        list(DataLoader(FailsAt(5, error), batch_size=2, num_workers=2))
    text = str(caught.value)
    assert "Caught " + error.__name__ + " in DataLoader worker process 0" in text
    assert "sample 5 is broken" in text and "raise self.error" in text  # the worker's own frame


def test_a_failing_worker_init_fn_is_raised_here():
    with pytest.raises(ValueError, match="worker 0 cannot start"):
        list(DataLoader(Rows(4), num_workers=1, worker_init_fn=fail_in_init))


def test_a_slow_worker_times_out():
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        next(iter(DataLoader(Slow(), num_workers=1, timeout=0.5)))


def test_a_spawned_worker_gets_the_dataset_on_the_host():
    """Started afresh, a worker gets the dataset with its tensors moved to numpy: no array of
    another library crosses. (Nothing of this module is needed there: the dataset is a list and the
    collate function reads each sample's backend.)"""
    with backends.use("array_api_strict"):
        samples = list(ag.arange(3.0))
        assert samples[0].backend.name == "array_api_strict"
        loader = DataLoader(
            samples,
            batch_size=None,
            num_workers=1,
            multiprocessing_context="spawn",
            collate_fn=operator.attrgetter("backend.name"),
        )
        assert list(loader) == ["numpy"] * 3


# --- a training loop ---------------------------------------------------------------------------
def test_training_on_loader_batches_matches_pytorch(float64_backend):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((20, 3)), rng.standard_normal((20, 1))
    ours, twin = nn.Linear(3, 1).double(), torch.nn.Linear(3, 1).double()
    twin.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    ours_opt, twin_opt = optim.SGD(ours.parameters(), lr=0.1), torch.optim.SGD(twin.parameters(), lr=0.1)

    def losses(loader, model, opt, mse) -> list[float]:
        out = []
        for _ in range(2):
            for xb, yb in loader:
                opt.zero_grad()
                loss = mse(model(xb), yb)
                loss.backward()
                opt.step()
                out.append(loss.item())
        return out

    ours_losses = losses(
        DataLoader(TensorDataset(x, y), batch_size=10, sampler=SequentialSampler(x)), ours, ours_opt, nn.MSELoss()
    )
    twin_losses = losses(
        tdata.DataLoader(tdata.TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=10,
                         sampler=tdata.SequentialSampler(x)), twin, twin_opt, torch.nn.MSELoss(),
    )  # fmt: skip
    assert len(ours_losses) == 4
    np.testing.assert_allclose(ours_losses, twin_losses, rtol=1e-10)


# --- the docstrings' examples ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    ["", ".dataset", ".sampler", ".dataloader", "._utils.collate", "._utils.rng", "._utils.worker"],
)
def test_docstring_examples(name):
    with backends.use("numpy"):
        result = doctest.testmod(importlib.import_module("autograd_core.utils.data" + name))
    assert result.failed == 0 and result.attempted > 0
