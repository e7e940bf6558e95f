"""Subscribe Quorum's hook receiver to a provider's status events (Prolific: submission status changes)."""
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from hits import providers
from hits.links import public_url


class Command(BaseCommand):
    help = (
        "Subscribe this deployment's hook URL (on QUORUM_PUBLIC_BASE_URL, which must be https and public) to a "
        "provider's status events, confirm the subscription, and print the signing secret to set in the "
        "environment (QUORUM_PROLIFIC_HOOK_SECRET_ENV names the variable). The reconciler stays the fallback."
    )

    def add_arguments(self, parser):
        keys = [k for k, cls in providers.classes().items() if cls.pushes_status]
        parser.add_argument("--provider", required=True, choices=keys, help="The provider whose events to follow.")
        parser.add_argument(
            "--workspace", default=getattr(settings, "QUORUM_PROLIFIC_WORKSPACE_ID", ""),
            help="The provider's workspace id (default: QUORUM_PROLIFIC_WORKSPACE_ID).",
        )

    def handle(self, *args, provider, workspace, **options):
        if not workspace:
            raise CommandError("give --workspace or set QUORUM_PROLIFIC_WORKSPACE_ID")
        target = public_url(reverse(f"hits:{provider}-hooks"))
        try:
            result = providers.get(provider).subscribe_hooks(workspace_id=workspace, target_url=target)
        except providers.ProviderError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Subscribed {target} (subscription {result['subscription']}).")
        self.stdout.write(f"Set {settings.QUORUM_PROLIFIC_HOOK_SECRET_ENV}={result['secret']} in the environment.")
