"""The HTTP benchmark's baseline: a bare Django view doing one SELECT and one INSERT."""
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt


@csrf_exempt
def baseline(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, payload FROM annotation_item WHERE id = %s", [1])
        row = cursor.fetchone()
        cursor.execute("INSERT INTO perf_baseline (item_id, body) VALUES (%s, %s)", [row[0], request.body.decode()[:200]])
    return JsonResponse({"ok": True})
