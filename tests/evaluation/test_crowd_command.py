"""The create_crowd_campaign command: a thin wrapper whose refusals are CommandErrors with reasons."""
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Job
from evaluation.models import CampaignItem, CampaignJob

from .crowd_data import make_test_set

pytestmark = pytest.mark.django_db

ARGS = ["--challenge", "DSTC9 Track 1", "--test-set", "crowd-test"]


def test_command_creates_and_launches_a_crowd_campaign(tmp_path, capsys):
    make_test_set(tmp_path / "data")
    call_command("create_crowd_campaign", "cli", *ARGS, "--entries", "team-alpha/sub-a1,team-beta/sub-b7", "--order-seed", "5", "--launch")
    crowd = CampaignJob.objects.get(campaign__name="cli")
    assert crowd.job.state == Job.State.LIVE and crowd.order_seed == 5 and crowd.job.redundancy == 3
    assert CampaignItem.objects.filter(campaign=crowd.campaign).count() == 15
    assert "15 items x 3 raters on 4 instances (order seed 5); launched" in capsys.readouterr().out


def test_command_refuses_unknown_entries_and_bad_input(tmp_path):
    make_test_set(tmp_path / "data")
    with pytest.raises(CommandError, match="no entry 'team-zeta/x'"):
        call_command("create_crowd_campaign", "cli", *ARGS, "--entries", "team-zeta/x")
    with pytest.raises(CommandError, match="redundancy must be a whole number from 1 to 50"):
        call_command("create_crowd_campaign", "cli", *ARGS, "--entries", "team-alpha/sub-a1", "--raters", "0")
    assert not CampaignJob.objects.exists() and not Job.objects.exists()
