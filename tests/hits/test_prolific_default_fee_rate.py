"""The default Prolific fee rate is never under Prolific's fee. Prolific takes a third of pay ("Set up
bonuses": fees 283.34 cents on 850), and a job that does not set its rate takes
QUORUM_PROLIFIC_FEE_RATE: at 0.3333 a budget equal to Quorum's estimate could be passed by what
Prolific charges for a large study. Pure: no database."""
import json
from decimal import Decimal
from fractions import Fraction

import pytest
from django.conf import settings

from hits import providers
from hits.fakes.prolific_server import FakeProlific
from hits.policy import costs
from hits.providers.prolific.fees import minor_units

D = Decimal
A_THIRD = D(1) / 3  # Prolific's share, to 28 digits: the fake rounds each participant's fee to the hundredth of a cent


def test_a_new_jobs_fee_rate_is_at_least_a_third():
    default = providers.clean_settings({}, {})["prolific_fee_rate"]  # what a job that sets none takes
    assert D(default) == D(str(settings.QUORUM_PROLIFIC_FEE_RATE))
    assert Fraction(default) >= Fraction(1, 3)


def _charged_cents(fake: FakeProlific, *, reward, places: int) -> Decimal:
    """What the fake takes from the balance to publish one study of `places` places at `reward` USD."""
    auth = {"Authorization": f"Token {fake.token}"}
    body = {
        "name": "n", "external_study_url": "https://q.example/{{%PROLIFIC_PID%}}", "completion_codes": [],
        "total_available_places": places, "reward": minor_units(reward), "prolific_id_option": "url_parameters",
    }
    status, study, _ = fake.handle("POST", "/api/v1/studies/", auth, json.dumps(body).encode())
    assert status == 201, study
    publish = json.dumps({"action": "PUBLISH"}).encode()
    status, answer, _ = fake.handle("POST", f"/api/v1/studies/{study['id']}/transition/", auth, publish)
    assert status == 200, answer
    return fake.charged_cents()


# 1,000 places. The fake charges 1,000 x (reward + a third of it to the hundredth of a cent):
#   $10.00: 1000 x (1000 + 333.33) cents = $13,333.30
#   $10.01: 1000 x (1001 + 333.67) cents = $13,346.70
#   $10.02: 1000 x (1002 + 334.00) cents = $13,360.00
# Quorum reserves the rewards plus the fee at its rate on the total, with 0.03 cent a participant of
# room for Prolific's rounding, up to the cent. At 0.3334: $10,000 + 3334.00 + 0.30 = $13,334.30;
# $10,010 + 3337.334 + 0.30 -> $13,347.64; $10,020 + 3340.668 + 0.30 -> $13,360.97, each above the
# charge. At 0.3333 the last two fall short: $13,346.64 and $13,359.97.
@pytest.mark.parametrize(("reward", "estimate", "charged"), [
    ("10.00", "13334.30", "13333.30"), ("10.01", "13347.64", "13346.70"), ("10.02", "13360.97", "13360.00"),
])
def test_a_budget_of_the_estimate_at_the_default_rate_holds_what_prolific_charges(reward, estimate, charged):
    prolific = providers.get("prolific")
    rate = providers.clean_settings({}, {})["prolific_fee_rate"]
    quorum = costs.estimate(prolific, items=1000, redundancy=1, reward=D(reward), fee_rate=D(rate))
    with FakeProlific(fee_rate=A_THIRD) as fake:
        cents = _charged_cents(fake, reward=D(reward), places=1000)
    assert cents / 100 <= quorum.total  # a budget of the estimate is enough
    assert (quorum.total, cents / 100) == (D(estimate), D(charged))
