"""How an API client says who it is: DRF's token, sent as `Authorization: Token <key>` or as
`Authorization: Bearer <key>`, the scheme most HTTP clients send a token with. DRF alone answers the
second "Authentication credentials were not provided.", which sends a scripter looking elsewhere."""
from rest_framework import authentication, exceptions

BEARER = b"bearer"


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate(self, request):
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() != BEARER:
            return super().authenticate(request)
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Invalid token header: give the token after Bearer, with no spaces in it.")
        try:
            key = parts[1].decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed("Invalid token header: the token has characters a token cannot have.") from None
        return self.authenticate_credentials(key)
