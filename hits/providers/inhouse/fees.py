"""In-house work costs the reward and nothing more: there is no provider to charge a fee. Pure."""
from decimal import Decimal

NO_FEE = Decimal("0.00")
