"""routerlab.analysis.synthetic: the paper's models at the points the paper states."""

import numpy as np
import pytest

from routerlab.analysis import stats, synthetic


def test_ideal_curve():
    d = synthetic.ideal([0.5e6, 1e6, 2e6], o_sat=1e6)
    assert d.plr.tolist() == pytest.approx([0, 0, 0.5])
    assert d.throughput_pps.tolist() == pytest.approx([0.5e6, 1e6, 1e6])
    assert d.model.str.startswith("synthetic").all()


def test_realistic_curve_points():
    d = synthetic.realistic([1e3, 0.5e6, 1e6, 1.25e6, 1.5e6, 2e6, 2.6e6])
    plr = d.plr.to_numpy()
    assert plr[0] == pytest.approx(1e-8, rel=0.05)
    assert plr[1] == pytest.approx(10 ** -5)  # log-linear half way from 1e-8 to 1e-2
    assert plr[2] == pytest.approx(0.01)
    t_sat = 1e6 * 0.99
    assert d.throughput_pps.iloc[3] == pytest.approx(t_sat)
    assert d.throughput_pps.iloc[4] == pytest.approx(t_sat)
    assert d.throughput_pps.iloc[5] == pytest.approx(t_sat * 0.5)  # half way down the thrash slope
    assert d.throughput_pps.iloc[6] == pytest.approx(0)
    assert np.all(np.diff(plr) > 0)


def test_realistic_curve_is_good_under_the_verdict():
    o = np.arange(0.3e6, 1.51e6, 0.15e6)
    d = synthetic.realistic(o)
    assert stats.saturation_verdict(d.offered_pps, d.plr).good
