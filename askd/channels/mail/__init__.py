"""E-mail: the mail channel (``channel.py``), what a mail says
(``message.py``) and the mail server (``smtp.py``). Nothing is imported
here: the settings import ``smtp.py`` alone."""
