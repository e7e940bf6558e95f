"""Fee rules and estimates, checked against figures computed by hand."""
from decimal import Decimal as D

import pytest

from hits import providers
from hits.policy import costs
from hits.providers.mturk import fees as mturk_fees

MTURK, PROLIFIC, INHOUSE = (providers.get(key) for key in ("mturk", "prolific", "inhouse"))


@pytest.mark.parametrize(
    "reward, per_hit, fee",
    [
        ("0.50", 1, "0.10"),  # 20% of 0.50
        ("0.50", 9, "0.10"),  # still 20% below 10 assignments
        ("0.50", 10, "0.20"),  # 40% from 10 assignments on
        ("0.04", 1, "0.01"),  # 20% of 0.04 is 0.008: the $0.01 minimum applies
        ("0.01", 20, "0.01"),  # 40% of 0.01 is 0.004: minimum
        ("0.03", 9, "0.01"),  # 0.006 -> minimum
        ("0.13", 1, "0.03"),  # 0.026 -> rounds half up to 0.03
    ],
)
def test_mturk_fee_per_assignment(reward, per_hit, fee):
    assert mturk_fees.fee_per_assignment(D(reward), per_hit) == D(fee)


def test_mturk_hit_cost_includes_fee_for_every_assignment():
    # 9 assignments at 0.50 + 0.10 fee = 5.40; 10 assignments at 0.50 + 0.20 = 7.00
    assert costs.posting_cost(MTURK, D("0.50"), 9) == D("5.40")
    assert costs.posting_cost(MTURK, D("0.50"), 10) == D("7.00")


def test_prolific_fee_is_the_configured_rate_on_the_studys_total():
    # 20 places at 0.50 = 10.00; 33.33% of it = 3.333, up to 3.334 with Prolific's rounding in hundredths of
    # a cent per participant (16.67 cents each) -> 3.34 (not 20 x 0.17 = 3.40 per place rounded to the cent)
    assert costs.posting_cost(PROLIFIC, D("0.50"), 20, fee_rate=D("0.3333")) == D("13.34")
    assert costs.posting_cost(PROLIFIC, D("1.00"), 3, fee_rate=D("0.4286")) == D("4.29")


def test_raddle_job_estimate_on_mturk():
    # 100 turns x 3 workers = 300 assignments in HITs of 9: 33 HITs of 9 and one of 3.
    # Every assignment costs 0.50 + 0.10 = 0.60 -> 180.00 in all; fees 30.00.
    est = costs.estimate(MTURK, items=100, redundancy=3, reward="0.50", assignments_per_posting=9, minutes_per_assignment=2)
    assert (est.assignments, est.postings) == (300, 34)
    assert (est.rewards, est.fees, est.total) == (D("150.00"), D("30.00"), D("180.00"))
    assert est.hourly_pay == D("15.00")  # 0.50 per 2 minutes


def test_large_hits_cost_more_on_mturk():
    small = costs.estimate(MTURK, items=100, redundancy=1, reward="0.50", assignments_per_posting=9)
    large = costs.estimate(MTURK, items=100, redundancy=1, reward="0.50", assignments_per_posting=10)
    assert small.total == D("60.00") and large.total == D("70.00")


def test_inhouse_has_no_fee_and_hourly_pay_is_reward_per_hour():
    est = costs.estimate(INHOUSE, items=10, redundancy=2, reward="0.20", minutes_per_assignment="1.5")
    assert (est.fees, est.total, est.hourly_pay) == (D("0.00"), D("4.00"), D("8.00"))


def test_bonus_costs():
    assert costs.bonus_cost(MTURK, "1.00") == D("1.20")
    assert costs.bonus_cost(MTURK, "0.02") == D("0.03")  # minimum fee
    assert costs.bonus_cost(PROLIFIC, "1.00", fee_rate="0.3333") == D("1.34")  # 0.3333 of a fee, up to the cent


def test_bad_input_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="above zero"):
        costs.hourly_pay("0.50", 0)
    with pytest.raises(KeyError, match="unknown provider"):
        providers.get("upwork")
    with pytest.raises(ValueError):
        costs.split_into_postings(10, 0)
