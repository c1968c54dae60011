"""A folder whose name is not text in the file-system encoding: bytes of another encoding (``\\xe9``,
Latin-1's é, from an old archive or a Windows share, on a UTF-8 machine), or any non-ASCII name
under an ASCII locale (``LC_ALL=C PYTHONUTF8=0``). Python hands such a name over with lone
surrogates (``\\udce9``, PEP 383).

QA (qa157): ``tuner study init demo.yaml`` in such a folder ended in a traceback
(``UnicodeEncodeError: 'utf-8' codec can't encode character '\\udce9' ... surrogates not allowed``):
the path-length check encoded the path as UTF-8, not as the file system's bytes.
"""

import os

from click.testing import CliRunner

from tuner.cli import cli
from tuner.config.files import check_output


def _latin1_folder(tmp_path):
    folder = os.path.join(os.fsencode(tmp_path), b"\xe9tudes")  # not UTF-8: a lone 0xE9
    os.mkdir(folder)
    return os.fsdecode(folder)  # '...\udce9tudes'


def test_an_output_in_a_folder_not_named_in_utf8_is_checked(tmp_path):
    folder = _latin1_folder(tmp_path)
    check_output(os.path.join(folder, "best.yaml"), "-o")  # no exception: the folder is writable
    check_output(os.path.join(folder, "pngs"), "--png", folder=True)
    assert os.listdir(folder) == []  # the check leaves nothing behind


def test_study_init_in_a_folder_not_named_in_utf8(tmp_path, monkeypatch):
    folder = _latin1_folder(tmp_path)
    monkeypatch.chdir(folder)
    done = CliRunner().invoke(cli, ["study", "init", "demo.yaml", "--backend", "model"],
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert os.listdir(folder) == ["demo.yaml"]
