"""What both apps' REST APIs share: the exception handler and the owned-record viewset."""
