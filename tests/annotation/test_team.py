"""Team management (issue 10, part 5): add in-house annotators from a CSV (page and command) with a
one-time link to set a password, deactivate them, and organizers see their models in the admin."""
import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Worker

pytestmark = pytest.mark.django_db
CSV = "username,email,name\nann,ann@example.org,Ann Lee\nbob,not-an-email\n\ncid,cid@example.org\n"


def test_the_command_adds_annotators_with_a_one_time_link_and_reports_bad_rows(tmp_path, client):
    path = tmp_path / "team.csv"
    path.write_text(CSV)
    out = io.StringIO()
    call_command("add_annotators", str(path), "--base-url", "https://q.example.org", stdout=out)
    text = out.getvalue()
    assert "bob\tline 3: 'not-an-email' is not an email address" in text and "2 added, 1 not" in text
    ann = get_user_model().objects.get(username="ann")
    assert (ann.email, ann.first_name, ann.last_name, ann.has_usable_password()) == ("ann@example.org", "Ann", "Lee", False)
    assert Worker.objects.filter(user=ann, provider=Worker.INHOUSE, external_id="ann").exists()
    link = next(line for line in text.splitlines() if line.startswith("ann\t")).split("\t")[2]
    assert link.startswith("https://q.example.org/accounts/reset/")

    # The link sets the password once; then the annotator logs in; the link is spent.
    path_only = link.removeprefix("https://q.example.org")
    form_page = client.get(path_only, follow=True)
    assert "Choose your password" in form_page.content.decode()
    done = client.post(form_page.redirect_chain[-1][0], {"new_password1": "a-long-pass-77", "new_password2": "a-long-pass-77"})
    assert done.status_code == 302
    assert client.login(username="ann", password="a-long-pass-77")
    client.logout()
    assert "has been used already or has expired" in client.get(path_only, follow=True).content.decode()

    again = io.StringIO()
    call_command("add_annotators", str(path), stdout=again)
    assert "this user name exists already" in again.getvalue()


def test_the_team_page_adds_lists_and_deactivates(organizer, client):
    client.force_login(organizer)
    page = client.post(reverse("organizer:team-add"), {"rows": 'dee,dee@example.org,<b>Dee</b>\n'})
    body = page.content.decode()
    assert page.status_code == 200 and "set-password-link" in body and "/accounts/reset/" in body
    assert "&lt;b&gt;Dee&lt;/b&gt;" in body and "<b>Dee</b>" not in body
    dee = Worker.objects.get(external_id="dee")
    client.post(reverse("organizer:team-active", kwargs={"pk": dee.pk}), {"active": "0"})
    dee.user.refresh_from_db()
    assert not dee.user.is_active
    assert "deactivated" in client.get(reverse("organizer:team")).content.decode()
    client.post(reverse("organizer:team-active", kwargs={"pk": dee.pk}), {"active": "1"})
    dee.user.refresh_from_db()
    assert dee.user.is_active


def test_a_file_that_is_not_utf8_is_refused_whole_on_the_page_and_by_the_command(organizer, client, tmp_path):
    latin1 = "username,email,name\nren,ren@example.org,Ren\u00e9e Dupr\u00e9\n".encode("latin-1")
    client.force_login(organizer)
    page = client.post(reverse("organizer:team-add"), {"file": io.BytesIO(latin1)})
    assert page.status_code == 400 and "the file is not UTF-8 text" in page.content.decode()
    path = tmp_path / "team.csv"
    path.write_bytes(latin1)
    with pytest.raises(CommandError, match="is not UTF-8 text"):
        call_command("add_annotators", str(path))
    assert not get_user_model().objects.filter(username="ren").exists()  # not "Ren\ufffde"


def test_only_organizers_manage_the_team(make_annotator, client):
    user, worker = make_annotator("eve")
    client.force_login(user)
    assert client.get(reverse("organizer:team")).status_code == 403
    assert client.post(reverse("organizer:team-add"), {"rows": "mal,mal@example.org"}).status_code == 403
    assert client.post(reverse("organizer:team-active", kwargs={"pk": worker.pk}), {"active": "0"}).status_code == 403
    assert not get_user_model().objects.filter(username="mal").exists()


def test_organizers_see_their_models_in_the_admin_read_only_where_services_write(organizer, client):
    client.force_login(organizer)
    index = client.get("/admin/").content.decode()
    assert "/admin/annotation/job/" in index and "/admin/annotation/response/" in index
    assert client.get("/admin/annotation/job/add/").status_code == 200
    assert client.get("/admin/annotation/response/").status_code == 200
    assert client.get("/admin/annotation/response/add/").status_code == 403  # responses change through their life only


def test_an_empty_list_is_refused_with_what_to_write(organizer, client):
    client.force_login(organizer)
    page = client.post(reverse("organizer:team-add"), {"rows": "  \n\n"})
    body = page.content.decode()
    assert page.status_code == 400
    assert "Nobody was added: the list is empty" in body and "username,email" in body
    assert not Worker.objects.exists()


def test_lines_not_added_come_back_in_the_box_to_correct_and_the_heading_counts(organizer, client):
    client.force_login(organizer)
    page = client.post(reverse("organizer:team-add"), {"rows": 'ann,ann@example.org,Ann Lee\nbob,not-an-email\ncid\n"dee lee",dee@example.org'})
    body = page.content.decode()
    assert "Added 1 of 4" in body
    assert "no email: a line is username,email" in body  # not "'' is not an email address"
    assert "is not a user name: use letters, digits and @ . + - _ only" in body  # was created with the space
    box = body.split('name="rows"', 1)[1].split("</textarea>", 1)[0].split(">", 1)[1]
    assert box == "bob,not-an-email\ncid\ndee lee,dee@example.org\n"  # ann was added: not in the box
    assert Worker.objects.filter(external_id="ann").exists()

    again = client.post(reverse("organizer:team-add"), {"rows": "bob,not-an-email"}).content.decode()
    assert "Nobody was added" in again and "Added 0 of 1" not in again
