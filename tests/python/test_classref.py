"""Class references resolve only to a class defined under exactly the allowed (module, qualname)."""

import json
import json.decoder

import pytest

from rlarchive.errors import RlarchiveError
from rlarchive.values import ClassRef, class_allowed


def _refused(ref, allow):
    with pytest.raises(RlarchiveError) as e:
        ref.resolve(allow)
    assert e.value.code == "IMPORT_NOT_ALLOWED"
    assert ref.name in str(e.value) or repr(ref.name) in str(e.value)


def test_exact_names_and_module_patterns():
    assert ClassRef("json.decoder", "JSONDecoder").resolve(["json.decoder.JSONDecoder"]) is json.decoder.JSONDecoder
    assert ClassRef("json.decoder", "JSONDecoder").resolve(["json.decoder:JSONDecoder"]) is json.decoder.JSONDecoder
    assert ClassRef("json.decoder", "JSONDecoder").resolve(["json.decoder.*"]) is json.decoder.JSONDecoder


def test_a_module_pattern_is_not_a_prefix():
    assert not class_allowed("json.decoder", "JSONDecoder", ["json.*"])
    _refused(ClassRef("json.decoder", "JSONDecoder"), ["json.*"])


def test_no_traversal_through_module_attributes():
    # "decoder" is a module reached as an attribute of json: refused even though json.* is allowed
    _refused(ClassRef("json", "decoder.JSONDecoder"), ["json.*"])
    # the attack of the security report: a module attribute that is a callable of another module
    _refused(ClassRef("subprocess", "os.system"), ["subprocess.*"])


def test_reexported_classes_functions_and_instances_are_refused():
    _refused(ClassRef("json", "JSONDecoder"), ["json.*"])  # defined in json.decoder, re-exported by json
    _refused(ClassRef("json", "loads"), ["json.*"])  # a function
    _refused(ClassRef("os", "system"), ["os.system"])  # allowed by name, but not a class
    _refused(ClassRef("json", "_default_decoder"), ["json.*"])  # an instance


def test_unlisted_and_malformed_names_are_refused_before_import():
    _refused(ClassRef("os", "system"), [])
    with pytest.raises(RlarchiveError) as e:
        ClassRef("json.decoder", "JSONDecoder.__init__.__globals__").resolve(["json.decoder.*"])
    assert e.value.code == "IMPORT_NOT_ALLOWED"
    with pytest.raises(RlarchiveError):
        ClassRef("json decoder", "X").resolve(["json decoder.*"])
