"""Calibration recovers known parameters from synthetic measurements."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.models.calibration import (
    CALIBRATION_ERRORS,
    CalibrationError,
    PageableFit,
    fit_block_energy,
    fit_lambda_k,
    fit_pageable,
    fit_transfer,
)


def test_lambda_k_from_one_launch_is_estimated_over_measured():
    assert fit_lambda_k(estimated_s=[0.703787], measured_s=[1.0]) == pytest.approx(0.703787)


def test_lambda_k_is_recovered_by_least_squares_from_noisy_launches():
    rng = np.random.default_rng(0)
    estimated = rng.uniform(1e-4, 1e-2, size=50)
    measured = estimated / 0.703787 * rng.normal(1.0, 0.01, size=50)
    assert fit_lambda_k(estimated_s=estimated, measured_s=measured) == pytest.approx(
        0.703787, rel=0.01
    )


@pytest.mark.parametrize(("startup", "lam"), [(3.9687e-6, 0.689), (5.1569e-6, 0.653)])
def test_startup_and_lambda_c_are_recovered_per_direction(startup, lam):
    sizes = np.array([0, 4e3, 4e5, 4e7, 4e8])
    times = startup + sizes / (15.8e9 * lam)
    fit = fit_transfer(sizes=sizes, times_s=times, bandwidth=15.8e9)
    assert fit.startup_s == pytest.approx(startup, rel=1e-6)
    assert fit.lambda_c == pytest.approx(lam, rel=1e-9)


@pytest.mark.parametrize(("startup", "staging"), [(12e-6, 7e9), (14e-6, 11.6e9)])
def test_pageable_startup_and_staging_rate_are_recovered_from_noisy_copies(startup, staging):
    rng = np.random.default_rng(1)
    sizes = np.geomspace(1e4, 1e9, 25)
    times = startup + sizes / staging + rng.normal(0.0, 2e-7, size=sizes.size)
    startup_s, staging_bandwidth = fit_pageable(sizes=sizes, times_s=times, link_rate=54.5e9)
    assert staging_bandwidth == pytest.approx(staging, rel=1e-3)
    assert startup_s == pytest.approx(startup, abs=1e-6)
    exact = fit_pageable(sizes=sizes, times_s=startup + sizes / staging, link_rate=54.5e9)
    assert exact == PageableFit(pytest.approx(startup, rel=1e-6), pytest.approx(staging))


def test_the_pageable_fit_uses_only_copies_where_the_staging_rate_binds():
    # Small pageable copies return early (the driver buffers them), off the line.
    sizes = np.array([1e3, 1e4, 1e7, 1e8, 1e9])
    times = 12e-6 + sizes / 7e9
    times[:2] = 2e-6
    fit = fit_pageable(sizes=sizes, times_s=times, link_rate=54.5e9, min_bytes=1e6)
    assert fit.staging_bandwidth == pytest.approx(7e9)
    assert fit.startup_s == pytest.approx(12e-6)
    with pytest.raises(CalibrationError, match=r"at least 2 measurements, got 1"):
        fit_pageable(sizes=sizes, times_s=times, link_rate=54.5e9, min_bytes=5e8)


def test_the_pageable_fit_refuses_copies_at_the_links_rate():
    sizes = np.array([1e6, 1e8, 1e9])
    with pytest.raises(CalibrationError, match="the host staging rate does not bind"):
        fit_pageable(sizes=sizes, times_s=9e-6 + sizes / 54.5e9, link_rate=54.5e9)


def test_block_energy_and_static_power_are_recovered_from_three_measurements():
    # 003: two small NB and one medium suffice.
    nb = np.array([1, 2, 28])
    a, b, e_b, p_s = 2e-3, 1e-4, 0.15, 19.18
    times = a * nb + b
    energies = e_b * nb + p_s * times
    fit = fit_block_energy(blocks=nb, times_s=times, energies_j=energies)
    assert (fit.slope_s, fit.intercept_s) == (pytest.approx(a), pytest.approx(b))
    assert fit.block_energy_j == pytest.approx(e_b)
    assert fit.static_power_w == pytest.approx(p_s)
    given = fit_block_energy(blocks=nb, times_s=times, energies_j=energies, static_power_w=p_s)
    assert given.block_energy_j == pytest.approx(e_b)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"blocks": [1, 2], "times_s": [1, 2], "energies_j": [1, 2]}, "at least 3 measurements"),
        (
            {"blocks": [1, 2, 3], "times_s": [1, 2], "energies_j": [1, 2, 3]},
            "inconsistent measurements",
        ),
        ({"blocks": [1, 2, 3], "times_s": [1, -2, 3], "energies_j": [1, 2, 3]}, "must be positive"),
        ({"blocks": [4, 4, 4], "times_s": [1, 2, 3], "energies_j": [1, 2, 3]}, "two different"),
        (
            {"blocks": [1, 2, 3], "times_s": [3, 2, 1], "energies_j": [1, 2, 3]},
            "negative time per block",
        ),
    ],
)
def test_it_explains_measurements_it_cannot_fit(kwargs, fragment):
    with pytest.raises(CalibrationError, match=fragment):
        fit_block_energy(**kwargs)


def test_transfer_fits_reject_too_few_points_and_negative_startups():
    with pytest.raises(CalibrationError, match="at least 2"):
        fit_transfer(sizes=[1], times_s=[1], bandwidth=1)
    with pytest.raises(CalibrationError, match="negative startup time"):
        fit_transfer(sizes=[1e6, 2e6], times_s=[1e-3, 3e-3], bandwidth=1e9)
    with pytest.raises(CalibrationError, match="inconsistent"):
        fit_lambda_k(estimated_s=[1, 2], measured_s=[1])
    assert "{what}" in CALIBRATION_ERRORS["too_few"]
