from django.apps import AppConfig


class HitsConfig(AppConfig):
    name = "hits"
    verbose_name = "Crowd providers and payments"

    def ready(self):
        from annotation import signals
        from annotation.services.jobs import LAUNCH_CHECKS

        from . import receivers
        from .services.postings import launch_budget_check

        if launch_budget_check not in LAUNCH_CHECKS:
            LAUNCH_CHECKS.append(launch_budget_check)

        signals.job_launched.connect(receivers.on_job_launched, dispatch_uid="hits.job_launched")
        signals.response_submitted.connect(receivers.on_response_submitted, dispatch_uid="hits.response_submitted")
        try:
            from annotation.after_submit import SUBMIT_REDIRECTS
        except ImportError:
            try:
                from annotation.views import SUBMIT_REDIRECTS
            except ImportError:  # the registry is not there yet; see the hits report
                return
        SUBMIT_REDIRECTS["mturk"] = receivers.submit_redirect
        SUBMIT_REDIRECTS["prolific"] = receivers.submit_redirect
