"""A thread-safe token bucket: at most `rate` calls per second on average, bursts up to `burst`. Pure."""
import threading
import time


class RateLimiter:
    def __init__(self, rate: float, burst: int = 1, clock=time.monotonic, sleep=time.sleep):
        if rate <= 0:
            raise ValueError("the rate must be above zero calls per second")
        self.rate = float(rate)
        self.burst = max(1, int(burst))
        self._tokens = float(self.burst)
        self._clock, self._sleep = clock, sleep
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        while True:
            with self._lock:
                now = self._clock()
                self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
                self._last = now
                if self._tokens >= 1:
                    self._tokens -= 1
                    return
                wait = (1 - self._tokens) / self.rate
            self._sleep(wait)
