"""The provider registry: every package is found, nothing else names a provider, old URLs still work."""
import ast
import re
import subprocess
from pathlib import Path

from annotation.models import Worker
from hits import providers
from hits.links import entry_path
from hits.models import JobCrowdConfig, Posting, ProviderAssignment, ProviderEvent

ROOT = Path(__file__).resolve().parents[2]


def test_every_provider_column_takes_its_choices_from_the_registry():
    """A new crowd is a new package: the columns name the registry's function, not a list, so neither
    `hits/models.py` nor a migration changes when one is added."""
    for model in (JobCrowdConfig, Posting, ProviderAssignment, ProviderEvent):
        field = model._meta.get_field("provider")
        assert field.deconstruct()[3]["choices"] is providers.choices, model.__name__
        assert [key for key, _label in field.choices] == list(providers.keys())
    assert all(label and label != key for key, label in providers.choices())
    assert JobCrowdConfig().provider == providers.default_key() == Worker.INHOUSE  # in-house workers sign in


def test_entry_urls_keep_the_shape_workers_already_have(settings):
    assert entry_path("mturk", 7) == "/crowd/mturk/7/"  # MTurk ExternalQuestion URLs of live HITs
    assert entry_path("prolific", 7) == "/crowd/prolific/7/"  # Prolific study URLs


def test_no_provider_is_named_outside_its_package():
    """Only a provider's package spells its name; annotation's one spelling is `Worker.INHOUSE`, the
    workers who sign in to Quorum, which the in-house provider takes as its key."""
    names = "|".join(re.escape(f'"{k}"') + "|" + re.escape(f"'{k}'") for k in providers.keys())
    pattern = rf'{names}|Provider\.({"|".join(k.upper() for k in providers.keys())})'
    found = subprocess.run(
        ["grep", "-rnE", pattern, "--include=*.py", "--include=*.html", *PRODUCT_PACKAGES, "templates"],
        cwd=ROOT, capture_output=True, text=True,
    ).stdout.splitlines()
    allowed = ("hits/providers/", "hits/migrations/", "annotation/migrations/", "evaluation/migrations/")
    found = [line for line in found if not line.startswith(allowed)]
    assert [line for line in found if not (line.startswith("annotation/models.py:") and 'INHOUSE = "inhouse"' in line)] == []


#: Where provider options may be spelled in code: their own packages, and the migrations that moved
#: them (history).
OPTION_HOMES = ("hits/providers/",)
PRODUCT_PACKAGES = ("hits", "annotation", "evaluation", "quorum")


def option_names_outside_providers(root: Path, names: frozenset[str]) -> list[str]:
    """Every place outside a provider package where a provider option is a model, form or serializer
    field (an assignment in a class body), an attribute, a keyword or a parameter: read from the code's
    syntax tree, so unquoted names count."""
    found = []
    for package in PRODUCT_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if relative.startswith(OPTION_HOMES) or "/migrations/" in relative:
                continue
            for node in ast.walk(ast.parse(path.read_text(), filename=relative)):
                for name, what, line in _spelled(node):
                    if name in names:
                        found.append(f"{relative}:{line}: {what} {name}")
    return sorted(found)


def _spelled(node: ast.AST) -> list[tuple[str, str, int]]:
    """(name, what it is, line) of what `node` spells that could be an option."""
    if isinstance(node, ast.ClassDef):
        targets = [t for s in node.body if isinstance(s, ast.Assign) for t in s.targets]
        targets += [s.target for s in node.body if isinstance(s, ast.AnnAssign)]
        return [(t.id, f"field of {node.name}", t.lineno) for t in targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.Attribute):
        return [(node.attr, "attribute", node.lineno)]
    if isinstance(node, ast.keyword) and node.arg:
        return [(node.arg, "keyword", node.value.lineno)]
    if isinstance(node, ast.arg):
        return [(node.arg, "parameter", node.lineno)]
    return []


def test_every_provider_declares_its_options_and_no_two_share_a_name():
    options = providers.all_options()
    declared = [option.name for cls in providers.classes().values() for option in cls.options]
    assert len(declared) == len(set(declared)) == len(options)
    for name, option in options.items():
        assert option.help, name
        assert option.problem(option.default_value()) is None, name  # a default passes its own rule


def test_no_provider_option_lives_outside_its_package():
    names = frozenset(providers.all_options())
    assert {"sandbox", "prolific_fee_rate", "min_approval_rate", "prolific_filters"} <= names  # the scan looks for them
    assert option_names_outside_providers(ROOT, names) == []


def test_the_scan_sees_unquoted_fields_attributes_and_keywords(tmp_path):
    (tmp_path / "hits").mkdir()
    (tmp_path / "hits" / "leaky.py").write_text(
        "class Settings:\n    sandbox = Field()\n\n"
        "def f(config, fee):\n    configure(fee_rate=config.colour)\n    return config.sandbox\n"
    )
    for package in PRODUCT_PACKAGES[1:]:
        (tmp_path / package).mkdir()
    found = option_names_outside_providers(tmp_path, frozenset({"sandbox", "fee_rate", "colour", "fee"}))
    assert found == [
        "hits/leaky.py:2: field of Settings sandbox",
        "hits/leaky.py:4: parameter fee",
        "hits/leaky.py:5: attribute colour",
        "hits/leaky.py:5: keyword fee_rate",
        "hits/leaky.py:6: attribute sandbox",
    ]
