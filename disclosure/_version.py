#: The installed version of tiered-disclosure (also the distribution's, through hatch).
__version__ = "0.1.0"
