"""spmdc.runtime.cluster on made-up environments: plain dicts, no network, no processes."""
from __future__ import annotations

import pytest

from spmdc.env import VARIABLES, EnvironmentVariableError
from spmdc.runtime.cluster import ClusterSpec, detect, fill, first_slurm_host, split_address

EXPLICIT = {"SPMDC_COORDINATOR_ADDRESS": "127.0.0.1:1234", "SPMDC_NUM_PROCESSES": "2",
            "SPMDC_PROCESS_ID": "1"}
SLURM = {"SLURM_JOB_ID": "4242", "SLURM_STEP_NODELIST": "node[003-006,9],login1",
         "SLURM_NTASKS": "8", "SLURM_PROCID": "5", "SLURM_LOCALID": "1"}
OPENMPI4 = {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2",
            "OMPI_COMM_WORLD_LOCAL_RANK": "1",
            "OMPI_MCA_orte_hnp_uri": "2096365568.0;tcp://10.96.0.1,10.148.0.1:58613"}


def test_nothing_says_multi_process():
    assert detect({}) is None
    assert detect({"PATH": "/bin", "SPMDC_CPU_DEVICES": "4"}) is None


def test_explicit_variables():
    assert detect(EXPLICIT) == ClusterSpec("127.0.0.1:1234", 2, 1, None, "SPMDC_*")
    spec = detect({**EXPLICIT, "SPMDC_LOCAL_DEVICE_IDS": "2, 3"})
    assert spec.local_device_ids == (2, 3)


def test_empty_spmdc_variables_are_unset():
    assert detect({name: "" for name in EXPLICIT}) is None
    assert detect({**SLURM, "SPMDC_COORDINATOR_ADDRESS": " ", "SPMDC_LOCAL_DEVICE_IDS": ""}) \
        == detect(SLURM)


def test_explicit_variables_win_over_a_cluster():
    # A launcher inside a SLURM job: SLURM's ids, local rank included, must not leak in.
    assert detect({**SLURM, **OPENMPI4, **EXPLICIT}) == detect(EXPLICIT)


@pytest.mark.parametrize("given, missing", [
    (["SPMDC_NUM_PROCESSES"], "SPMDC_COORDINATOR_ADDRESS and SPMDC_PROCESS_ID are not"),
    (["SPMDC_COORDINATOR_ADDRESS", "SPMDC_PROCESS_ID"], "SPMDC_NUM_PROCESSES is not"),
    (["SPMDC_COORDINATOR_ADDRESS"], "SPMDC_NUM_PROCESSES and SPMDC_PROCESS_ID are not"),
])
def test_partial_explicit_set_names_the_missing(given, missing):
    with pytest.raises(EnvironmentVariableError, match=missing):
        detect({name: EXPLICIT[name] for name in given})


def test_partial_explicit_set_is_an_error_even_with_a_cluster():
    with pytest.raises(EnvironmentVariableError, match="SPMDC_NUM_PROCESSES is not"):
        detect({**SLURM, "SPMDC_COORDINATOR_ADDRESS": "h:1", "SPMDC_PROCESS_ID": "0"})


@pytest.mark.parametrize("node_list, first", [
    ("node[003-006,9],x", "node003"),
    ("node[9,003-006],x", "node9"),
    ("node[003-006]", "node003"),
    ("a-1,b", "a-1"),
    ("gpu17", "gpu17"),
    ("gpu17,gpu18", "gpu17"),
    ("rack[2-3]n[07-08]-ib,z", "rack2n07-ib"),
])
def test_first_slurm_host(node_list, first):
    assert first_slurm_host(node_list) == first


@pytest.mark.parametrize("node_list", ["node[003", "", "a]b"])
def test_bad_slurm_node_list(node_list):
    with pytest.raises(EnvironmentVariableError, match="SLURM_STEP_NODELIST"):
        detect({**SLURM, "SLURM_STEP_NODELIST": node_list})


def test_slurm():
    spec = detect(SLURM)
    assert spec == ClusterSpec(f"node003:{4242 % 4096 + 61440}", 8, 5, (1,), "slurm")
    assert spec.coordinator_address == "node003:61586"
    # the derived port stays in the top 4096 ports for any job id
    assert detect({**SLURM, "SLURM_JOB_ID": "4095"}).coordinator_address == "node003:65535"
    assert detect({**SLURM, "SLURM_JOB_ID": "4096"}).coordinator_address == "node003:61440"


def test_slurm_overrides():
    assert detect({**SLURM, "SPMDC_COORDINATOR_PORT": "5555"}).coordinator_address \
        == "node003:5555"
    spec = detect({**SLURM, "SPMDC_COORDINATOR_ADDRESS": "10.0.0.1:7000",
                   "SPMDC_LOCAL_DEVICE_IDS": "0,1"})
    assert spec == ClusterSpec("10.0.0.1:7000", 8, 5, (0, 1), "slurm")
    no_local_id = {name: value for name, value in SLURM.items() if name != "SLURM_LOCALID"}
    assert detect(no_local_id).local_device_ids is None


def test_slurm_needs_its_four_variables():
    assert detect({name: value for name, value in SLURM.items()
                   if name != "SLURM_STEP_NODELIST"}) is None


def test_openmpi4():
    spec = detect(OPENMPI4)
    assert spec == ClusterSpec(f"10.96.0.1:{2096365568 // 4096 % 4096 + 61440}", 2, 1, (1,),
                               "openmpi")
    assert spec.coordinator_address == "10.96.0.1:65344"


def test_openmpi4_ipv6():
    uri = ("1314521088.0;tcp6://[fe80::b9b:ac5d:9cf0:b858,2620:10d:c083:150e::3000:2]:43370")
    spec = detect({**OPENMPI4, "OMPI_MCA_orte_hnp_uri": uri})
    assert spec.coordinator_address == "[fe80::b9b:ac5d:9cf0:b858]:62880"
    assert split_address(spec.coordinator_address) == ("fe80::b9b:ac5d:9cf0:b858", 62880)


def test_openmpi_is_checked_before_slurm():
    # mpirun inside a SLURM job: only the OMPI_* variables are per process
    assert detect({**SLURM, **OPENMPI4}).source == "openmpi"


def test_openmpi_overrides():
    assert detect({**OPENMPI4, "SPMDC_COORDINATOR_PORT": "7001"}).coordinator_address \
        == "10.96.0.1:7001"
    assert detect({**OPENMPI4, "SPMDC_COORDINATOR_ADDRESS": "h:1"}).coordinator_address \
        == "h:1"


def test_openmpi5_asks_for_the_address():
    openmpi5 = {name: value for name, value in OPENMPI4.items()
                if name != "OMPI_MCA_orte_hnp_uri"}
    with pytest.raises(EnvironmentVariableError,
                       match="Open MPI 5.*set SPMDC_COORDINATOR_ADDRESS=host:port"):
        detect(openmpi5)
    spec = detect({**openmpi5, "SPMDC_COORDINATOR_ADDRESS": "10.0.0.1:7000"})
    assert spec == ClusterSpec("10.0.0.1:7000", 2, 1, (1,), "openmpi")


def test_unparseable_hnp_uri():
    with pytest.raises(EnvironmentVariableError, match="OMPI_MCA_orte_hnp_uri"):
        detect({**OPENMPI4, "OMPI_MCA_orte_hnp_uri": "garbage"})


@pytest.mark.parametrize("environ, name", [
    ({**EXPLICIT, "SPMDC_NUM_PROCESSES": "two"}, "SPMDC_NUM_PROCESSES"),
    ({**EXPLICIT, "SPMDC_NUM_PROCESSES": "0"}, "SPMDC_NUM_PROCESSES"),
    ({**EXPLICIT, "SPMDC_PROCESS_ID": "-1"}, "SPMDC_PROCESS_ID"),
    ({**EXPLICIT, "SPMDC_LOCAL_DEVICE_IDS": "0;1"}, "SPMDC_LOCAL_DEVICE_IDS"),
    ({**SLURM, "SLURM_NTASKS": "8x"}, "SLURM_NTASKS"),
    ({**SLURM, "SLURM_JOB_ID": ""}, "SLURM_JOB_ID"),
    ({**SLURM, "SLURM_LOCALID": "one"}, "SLURM_LOCALID"),
    ({**SLURM, "SPMDC_COORDINATOR_PORT": "70000"}, "SPMDC_COORDINATOR_PORT"),
    ({**OPENMPI4, "OMPI_COMM_WORLD_RANK": "1.0"}, "OMPI_COMM_WORLD_RANK"),
])
def test_bad_integers_name_the_variable(environ, name):
    with pytest.raises(EnvironmentVariableError, match=f"environment variable {name}="):
        detect(environ)


@pytest.mark.parametrize("environ, message", [
    ({**EXPLICIT, "SPMDC_PROCESS_ID": "2"}, r"process_id=2 \(from SPMDC_\*\) must be .* \[0, 2\)"),
    ({**SLURM, "SLURM_PROCID": "8"}, r"process_id=8 \(from slurm\)"),
    ({**EXPLICIT, "SPMDC_COORDINATOR_ADDRESS": "localhost"}, "must be 'host:port'"),
    ({**EXPLICIT, "SPMDC_COORDINATOR_ADDRESS": "h:port"}, "must be 'host:port'"),
    ({**EXPLICIT, "SPMDC_COORDINATOR_ADDRESS": ":1234"}, "must be 'host:port'"),
    ({**EXPLICIT, "SPMDC_COORDINATOR_ADDRESS": "fe80::1:1234"}, "for IPv6"),
])
def test_inconsistent_values(environ, message):
    with pytest.raises(ValueError, match=message):
        detect(environ)


def test_fill_arguments_win():
    spec = fill("10.0.0.1:99", 4, 3, [2], environ=EXPLICIT)
    assert spec == ClusterSpec("10.0.0.1:99", 4, 3, (2,), "arguments")
    assert fill("h:1", 2, 0, 5, environ={}).local_device_ids == (5,)


def test_fill_completes_arguments_from_the_environment():
    assert fill(environ=EXPLICIT) == detect(EXPLICIT)
    spec = fill(process_id=0, environ=SLURM)
    assert spec == ClusterSpec("node003:61586", 8, 0, (1,), "slurm")
    # a partial SPMDC_* set is fine when the arguments complete it
    spec = fill(num_processes=2, process_id=0,
                environ={"SPMDC_COORDINATOR_ADDRESS": "h:1", "SPMDC_LOCAL_DEVICE_IDS": "3"})
    assert spec == ClusterSpec("h:1", 2, 0, (3,), "SPMDC_*")
    assert fill("h:1", 2, 0, environ={"SPMDC_LOCAL_DEVICE_IDS": "3"}).local_device_ids == (3,)


def test_fill_names_what_is_missing():
    with pytest.raises(ValueError, match="num_processes is missing: pass num_processes=... "
                                         "or set SPMDC_NUM_PROCESSES") as info:
        fill("h:1", process_id=0, environ={})
    assert "process_id is missing" not in str(info.value)
    with pytest.raises(ValueError, match="coordinator_address is missing.*"
                                         "SPMDC_COORDINATOR_ADDRESS=host:port"):
        fill(environ={"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"})


@pytest.mark.parametrize("arguments, message", [
    (("h:1", 2, 2), r"process_id=2 .* \[0, 2\)"),
    (("h:1", 0, 0), "num_processes=0"),
    (("h:1", 2, -1), "process_id=-1"),
    (("h:1", 2, True), "process_id=True"),
    (("h", 2, 0), "must be 'host:port'"),
    (("h:0", 2, 0), "port in 1..65535"),
    (("h:1", 2, 0, [-1]), "local_device_ids"),
])
def test_fill_validates(arguments, message):
    with pytest.raises(ValueError, match=message):
        fill(*arguments, environ={})


def test_variables_are_documented():
    for name in ("SPMDC_COORDINATOR_ADDRESS", "SPMDC_NUM_PROCESSES", "SPMDC_PROCESS_ID",
                 "SPMDC_COORDINATOR_PORT", "SPMDC_LOCAL_DEVICE_IDS"):
        assert VARIABLES[name]
