from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Human evaluation of submissions"

    def ready(self):
        from . import receivers  # noqa: F401  (connects the receivers that keep ratings in step with responses)
