"""L-BFGS as ``torch.optim.LBFGS``: the same iterations, line search and stopping tests, on
the parameters flattened into one vector of the backend's arrays."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor
from optim.optimizer import Optimizer, hyperparameter, mark_updated

# The scalars of the method (dot products, step lengths, curvature ratios) are Python floats:
# PyTorch keeps them as 0-d tensors of the parameters' dtype, the same numbers for float64.


class LBFGS(Optimizer):
    """Limited-memory BFGS over all parameters as one vector (one parameter group only).

    Each ``step(closure)`` runs up to `max_iter` iterations (`max_eval` evaluations of
    `closure`, which must recompute the loss, call backward and return the loss): the
    direction comes from the last `history_size` curvature pairs; the step length is `lr`
    (the first iteration ever: ``min(1, 1 / |g|_1) * lr``), or comes from a line search
    satisfying the strong Wolfe conditions with ``line_search_fn="strong_wolfe"``. It stops
    early when the gradient's largest entry is at most `tolerance_grad`, or the step or the
    loss changes by less than `tolerance_change`. Returns the loss of the first evaluation.

    >>> import autograd_core as ag, optim
    >>> x = ag.tensor([-1.5, 2.0], dtype="float64", requires_grad=True)
    >>> opt = optim.LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2  # Rosenbrock's
    ...     loss.backward()
    ...     return loss
    >>> for _ in range(3):
    ...     _ = opt.step(closure)
    >>> [round(v, 4) for v in x.tolist()]  # Rosenbrock's minimum
    [1.0, 1.0]
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"line_search_fn must be None or 'strong_wolfe', got {line_search_fn!r}")
        defaults = dict(
            lr=hyperparameter("lr", lr),
            max_iter=max_iter,
            max_eval=max_iter * 5 // 4 if max_eval is None else max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
        )
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    # --- the parameters as one flat vector ---
    @property
    def _xp(self) -> Any:
        return self._params[0].backend.xp

    def _gather_flat_grad(self) -> Any:
        xp = self._xp
        return xp.concat(
            [xp.reshape(xp.zeros_like(p.array) if p.grad is None else p.grad.array, (-1,)) for p in self._params]
        )

    def _add_grad(self, step_size: float, update: Any) -> None:
        """``p += step_size * update`` for each parameter's slice of the flat `update`."""
        offset = 0
        for p in self._params:
            size = p.numel()
            p.array = p.array + step_size * self._xp.reshape(update[offset : offset + size], p.shape)
            mark_updated(p)
            offset += size
        self._persist()  # a lazy backend computes the new values now: no graph grows from one trial to the next

    def _clone_param(self) -> list[Any]:
        return [self._xp.asarray(p.array, copy=True) for p in self._params]

    def _set_param(self, arrays: list[Any]) -> None:
        for p, array in zip(self._params, arrays):
            p.array = self._xp.asarray(array, copy=True)
            mark_updated(p)
        self._persist()

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[Any], t: float, d: Any) -> tuple[float, Any]:
        """The loss and flat gradient at ``x + t * d``; the parameters are left at `x`."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run the iterations (see the class); `closure` is called with gradients enabled."""
        with ag.no_grad():
            return self._iterate(ag.enable_grad()(closure))

    def _iterate(self, closure: Callable[[], Any]) -> Any:
        xp, group = self._xp, self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]

        # the state is global; it is kept as the first parameter's (so state_dict has it)
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if _max_abs(xp, flat_grad) <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # the descent direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, h_diag = [], [], [], 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = _dot(xp, y, s)
                if ys > 1e-10:  # a curvature pair worth keeping
                    if len(old_dirs) == history_size:
                        for history in (old_dirs, old_stps, ro):
                            history.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / _dot(xp, y, y)
                if "al" not in state:
                    state["al"] = [None] * history_size
                d = _two_loop(xp, -flat_grad, old_dirs, old_stps, ro, h_diag, state["al"])

            prev_flat_grad = xp.asarray(flat_grad, copy=True)
            prev_loss = loss

            # the step length
            t = min(1.0, 1.0 / float(xp.sum(xp.abs(flat_grad)))) * lr if state["n_iter"] == 1 else lr
            gtd = _dot(xp, flat_grad, d)
            if gtd > -tolerance_change:  # not a descent direction any more
                break

            ls_func_evals = 0
            if group["line_search_fn"] is not None:
                x_init = self._clone_param()

                def obj_func(x: list[Any], t: float, d: Any) -> tuple[float, Any]:
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    xp, obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = _max_abs(xp, flat_grad) <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:  # re-evaluated except after the last iteration
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = _max_abs(xp, flat_grad) <= tolerance_grad
                    ls_func_evals = 1

            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if _max_abs(xp, d * t) <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break  # no progress

        state.update(
            d=d,
            t=t,
            old_dirs=old_dirs,
            old_stps=old_stps,
            ro=ro,
            H_diag=h_diag,
            prev_flat_grad=prev_flat_grad,
            prev_loss=prev_loss,
        )
        return orig_loss

    def _load_state_value(self, value: Any, p: Tensor, index: int, key: str) -> Any:
        # flat vectors and lists of them: none has the first parameter's shape
        return super()._load_state_value([value], p, index, key)[0]


def _dot(xp: Any, a: Any, b: Any) -> float:
    return float(xp.sum(a * b))


def _max_abs(xp: Any, a: Any) -> float:
    return float(xp.max(xp.abs(a)))


def _two_loop(
    xp: Any,
    q: Any,
    old_dirs: list,
    old_stps: list,
    ro: list[float],
    h_diag: float,
    al: list,
) -> Any:
    """The L-BFGS two-loop recursion: the inverse Hessian approximation times `q` (minus the
    gradient); `al` is the state's scratch list, written as PyTorch writes it."""
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = _dot(xp, old_stps[i], q) * ro[i]
        q = q + (-al[i]) * old_dirs[i]
    r = q * h_diag
    for i in range(len(old_dirs)):
        be_i = _dot(xp, old_dirs[i], r) * ro[i]
        r = r + (al[i] - be_i) * old_stps[i]
    return r


def _cubic_interpolate(
    x1: float, f1: float, g1: float, x2: float, f2: float, g2: float, bounds: tuple[float, float] | None = None
) -> float:
    """The minimizer of the cubic through two points with their values and slopes, clamped to
    `bounds` (default: between the points); their midpoint where the cubic has no minimum."""
    xmin_bound, xmax_bound = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (xmin_bound + xmax_bound) / 2.0
    d2 = d2_square**0.5
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, xmin_bound), xmax_bound)


def _strong_wolfe(  # noqa: C901, PLR0912, PLR0915 - PyTorch's line search, step for step
    xp: Any,
    obj_func: Callable[[list[Any], float, Any], tuple[float, Any]],
    x: list[Any],
    t: float,
    d: Any,
    f: float,
    g: Any,
    gtd: float,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, Any, float, int]:
    """A step length `t` along `d` satisfying the strong Wolfe conditions (bracketing, then
    zooming by cubic interpolation): returns its loss, flat gradient, `t` and the number of
    evaluations made."""
    d_norm = _max_abs(xp, d)
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = _dot(xp, g_new, d)

    # bracket an interval containing a point satisfying the conditions
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f, bracket_g, bracket_gtd = (
                [t_prev, t],
                [f_prev, f_new],
                [g_prev, g_new],
                [gtd_prev, gtd_new],
            )
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f, bracket_g, bracket_gtd = (
                [t_prev, t],
                [f_prev, f_new],
                [g_prev, g_new],
                [gtd_prev, gtd_new],
            )
            break
        # extrapolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new, gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(xp, g_new, d)
        ls_iter += 1

    if ls_iter == max_ls:  # reached the most evaluations allowed
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: refine the bracket until a point satisfies the conditions
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:  # the bracket is too small
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # too close to an end of the bracket (twice in a row, or at it): move 10% of it inside
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(xp, g_new, d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # the Armijo condition fails, or no lower than the lowest point: a new high end
            bracket[high_pos], bracket_f[high_pos], bracket_g[high_pos] = t, f_new, g_new
            bracket_gtd[high_pos] = gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True  # the Wolfe conditions hold
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # the old high end becomes the new low end
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            # the new point becomes the new low end
            bracket[low_pos], bracket_f[low_pos], bracket_g[low_pos] = t, f_new, g_new
            bracket_gtd[low_pos] = gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals
