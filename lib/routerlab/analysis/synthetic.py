"""The PASTRAMI paper's synthetic load-loss models (Figs 3-5). SYNTHETIC, not measured.

Every frame these functions return has a ``model`` column that starts with
``"synthetic"``, so a figure drawn from it can say so.

Ideal model (Fig 3): a router forwards everything up to its saturation load ``O_sat``
and exactly ``T_sat = O_sat`` above it, so ``PLR = max(0, 1 - T_sat / O)``.

Realistic model (Fig 4), with our choice where the paper gives no formula:

- below saturation the PLR rises smoothly, log-linear in ``O``:
  ``log10 PLR(O) = log10 plr_low + (log10 plr_sat - log10 plr_low) * O / O_sat``,
  from ``plr_low`` (1e-8) at ``O -> 0`` to ``plr_sat`` (1%) at ``O_sat``;
- from ``O_sat`` to ``O_trash`` the throughput stays at ``T_sat = O_sat (1 - plr_sat)``;
- above ``O_trash`` the router thrashes:
  ``T = T_sat * max(0, 1 - (O - O_trash) / M)`` with slope constant ``M`` (pps).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from routerlab.errors import ParameterError


def _frame(o, plr, model):
    o = np.asarray(o, dtype=float)
    return pd.DataFrame({"offered_pps": o, "plr": plr, "dr": 1 - plr,
                         "throughput_pps": o * (1 - plr), "model": model})


def ideal(offered, o_sat: float = 1e6) -> pd.DataFrame:
    """Ideal load-loss curve: no loss up to ``o_sat`` pps, throughput ``o_sat`` above.

    Parameters
    ----------
    offered : array-like
        Offered loads, pps (> 0).
    o_sat : float
        Saturation load, pps.

    Returns
    -------
    pandas.DataFrame
        ``offered_pps``, ``plr``, ``dr``, ``throughput_pps``, ``model`` = "synthetic: ideal".
    """
    o = np.asarray(offered, dtype=float)
    if (o <= 0).any():
        raise ParameterError("offered", "loads must be > 0 pps")
    plr = np.maximum(0.0, 1 - o_sat / o)
    return _frame(o, plr, "synthetic: ideal")


def realistic(offered, o_sat: float = 1e6, plr_sat: float = 0.01, o_trash: float = 1.5e6,
              m: float = 1e6, plr_low: float = 1e-8) -> pd.DataFrame:
    """Realistic load-loss curve: small loss below ``o_sat``, flat throughput, thrashing.

    Parameters
    ----------
    offered : array-like
        Offered loads, pps (> 0).
    o_sat : float
        Saturation load, pps; PLR there is ``plr_sat``.
    plr_sat : float
        PLR at ``o_sat`` (ratio; the paper's 1%).
    o_trash : float
        Load above which throughput falls (thrashing), pps (>= ``o_sat``).
    m : float
        Thrashing slope constant, pps: throughput reaches 0 at ``o_trash + m``.
    plr_low : float
        PLR approached at very low load (ratio; 1e-8).
    """
    o = np.asarray(offered, dtype=float)
    if (o <= 0).any():
        raise ParameterError("offered", "loads must be > 0 pps")
    if o_trash < o_sat:
        raise ParameterError("o_trash", f"must be >= o_sat ({o_sat:g}), got {o_trash:g}")
    if not 0 < plr_low < plr_sat < 1:
        raise ParameterError("plr_low", "need 0 < plr_low < plr_sat < 1")
    t_sat = o_sat * (1 - plr_sat)
    below = 10 ** (np.log10(plr_low) + (np.log10(plr_sat) - np.log10(plr_low)) * o / o_sat)
    t = np.where(o <= o_sat, o * (1 - below), t_sat)
    t = np.where(o > o_trash, t_sat * np.maximum(0.0, 1 - (o - o_trash) / m), t)
    return _frame(o, 1 - t / o, "synthetic: realistic")
