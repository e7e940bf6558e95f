"""Django's static files storage with each file's URL worked out once per process.

Every page names its stylesheet and scripts with `{% static %}`; Django's storage quotes and joins
the name again on every call, which cost the work page about a tenth of its rendering (issue 26,
docs/measurements.md). A file's URL depends only on its name and STATIC_URL, fixed for a process.
"""
from django.contrib.staticfiles import storage


class StaticFilesStorage(storage.StaticFilesStorage):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._urls: dict[str, str] = {}

    def url(self, name):
        try:
            return self._urls[name]
        except KeyError:
            found = self._urls[name] = super().url(name)
            return found
