"""An explicit ``!!int`` or ``!!float`` tag on text the YAML 1.2 core schema does not write as that
number is refused at its line, as other bad YAML is (tuner/config/yamlfile.py ``_core_text``).

QA: ``page_size: !!int "0b11"`` said ``holds a number Python will not read (invalid literal for int()
with base 10: '0b11')``, naming neither line nor key; ``!!int "1_0"`` and ``!!int "٣"`` (an
Arabic-Indic digit) were read by Python's ``int()`` as 10 and 3, which the untagged ``1_0`` (text)
never is, and ``!!float "1_0"`` as 10.0.
"""

import pytest

from tuner.config.yamlfile import ConfigError, read_yaml


@pytest.mark.parametrize("value", ['!!int "0b11"', '!!int "1_0"', '!!int "\u0663"', '!!int " 5"',
                                   '!!int "5\\n"', '!!float "abc"', '!!float "1_0"', '!!float "infinity"'])
def test_a_tagged_number_yaml_1_2_does_not_write_is_refused_at_its_line(tmp_path, value):
    path = tmp_path / "x.yaml"
    path.write_text(f"name: x\nserver:\n  args:\n    page_size: {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        read_yaml(path)
    assert err.value.key == "line 4"
    tag = value.split()[0]
    assert err.value.message.startswith(f"not valid YAML ({tag} ") and "as YAML 1.2 writes it" in err.value.message
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("value, read", [('!!int "16"', 16), ("!!int 0x10", 16), ('!!int "0o17"', 15),
                                         ('!!int "-3"', -3), ('!!float "0.5"', 0.5), ("!!float 5", 5.0),
                                         ('!!float "1e3"', 1000.0), ("16", 16), ("0.5", 0.5)])
def test_a_tagged_number_written_as_yaml_1_2_writes_it_is_read(tmp_path, value, read):
    path = tmp_path / "x.yaml"
    path.write_text(f"page_size: {value}\n", encoding="utf-8")
    got = read_yaml(path)["page_size"]
    assert got == read and type(got) is type(read)
