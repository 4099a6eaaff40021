// tests/recognize/parsers_nccl_test.cc
//
// NCCL message parsers (log-formats.md A, F) on message bodies as the framer
// leaves them: every era of each message, and near-misses that must not match.
#include <gtest/gtest.h>

#include "ncclpm/recognize/parsers.h"

namespace ncclpm::recognize {
namespace {

// --- version banner (A.2) ---------------------------------------------------

TEST(ParsersNccl, ParsesVersionBanner) {
  auto v = parse_nccl_version("NCCL version 2.21.5+cuda12.4");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->version, "2.21.5");
  EXPECT_EQ(v->cuda, "12.4");

  auto suffixed = parse_nccl_version("NCCL version 2.18.6a0+cuda11.8");
  ASSERT_TRUE(suffixed);
  EXPECT_EQ(suffixed->version, "2.18.6");
  EXPECT_EQ(suffixed->cuda, "11.8");
}

TEST(ParsersNccl, ParsesVersionBannerWithoutCudaSuffix) {
  auto v = parse_nccl_version("NCCL version 2.19.3");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->version, "2.19.3");
  EXPECT_EQ(v->cuda, "");
}

TEST(ParsersNccl, DoesNotTakeVersionInsidePyTorchErrorForABanner) {
  EXPECT_FALSE(
      parse_nccl_version("NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
                         "unhandled system error (run with "
                         "NCCL_DEBUG=INFO for details), NCCL version 2.14.3"));
  EXPECT_FALSE(parse_nccl_version(
      "ProcessGroupNCCL environments: NCCL version: 2.21.5, TORCH_NCCL_ASYNC_ERROR_HANDLING: 3"));
  EXPECT_FALSE(parse_nccl_version("NCCL version unknown"));
}

// --- environment (A.3) ------------------------------------------------------

TEST(ParsersNccl, ParsesEnvironmentSetting) {
  auto e = parse_nccl_env("NCCL_SOCKET_IFNAME set by environment to ib0");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->name, "NCCL_SOCKET_IFNAME");
  EXPECT_EQ(e->value, "ib0");
  auto dotted = parse_nccl_env("NCCL_IB_TIMEOUT set by environment to 22.");
  ASSERT_TRUE(dotted);
  EXPECT_EQ(dotted->value, "22");
}

TEST(ParsersNccl, RejectsEnvironmentLineWithoutSingleName) {
  EXPECT_FALSE(parse_nccl_env("the value set by environment to ib0"));
  EXPECT_FALSE(parse_nccl_env("NCCL_SOCKET_IFNAME=ib0"));
}

// --- communicators (A.3, F "comm summary", "init/teardown") -----------------

TEST(ParsersNccl, ParsesCommSummary) {
  auto c = parse_nccl_comm(
      "comm 0x55d5a8b3c2d0 rank 3 nRanks 16 nNodes 2 localRanks 8 localRank 3 MNNVL 0");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->event, "summary");
  EXPECT_EQ(c->comm, "0x55d5a8b3c2d0");
  EXPECT_EQ(c->rank, 3);
  EXPECT_EQ(c->nranks, 16);
  EXPECT_EQ(c->nnodes, 2);
  EXPECT_EQ(c->local_ranks, 8);
  EXPECT_EQ(c->local_rank, 3);
}

TEST(ParsersNccl, ParsesInitStartOf220) {
  auto c = parse_nccl_comm(
      "comm 0x55d5a8b3c2d0 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 1b000 commId "
      "0x2d4fa7e7dc3d1c3e - Init START");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->event, "init_start");
  EXPECT_EQ(c->api, "");
  EXPECT_EQ(c->rank, 0);
  EXPECT_EQ(c->nranks, 8);
  EXPECT_EQ(c->cuda_dev, 0);
  EXPECT_EQ(c->nvml_dev, 0);
  EXPECT_EQ(c->bus_id, "1b000");
  EXPECT_EQ(c->comm_id, "0x2d4fa7e7dc3d1c3e");
}

TEST(ParsersNccl, ParsesInitStartWithApiName222AndRankPrefix229) {
  auto c222 = parse_nccl_comm(
      "ncclCommInitRank comm 0x7f1c9c002f00 rank 3 nranks 16 cudaDev 3 nvmlDev 3 busId 4e000 "
      "commId "
      "0x99de3aa2a03ab5f7 - Init START");
  ASSERT_TRUE(c222);
  EXPECT_EQ(c222->event, "init_start");
  EXPECT_EQ(c222->api, "ncclCommInitRank");
  EXPECT_EQ(c222->rank, 3);
  EXPECT_EQ(c222->nranks, 16);

  auto c229 = parse_nccl_comm(
      "[Rank 5] ncclCommInitRankConfig comm 0x382ac700 rank 5 nranks 8 cudaDev 5 nvmlDev 5 busId "
      "c3000 commId "
      "0x1 - Init START");
  ASSERT_TRUE(c229);
  EXPECT_EQ(c229->api, "ncclCommInitRankConfig");
  EXPECT_EQ(c229->comm, "0x382ac700");
  EXPECT_EQ(c229->rank, 5);
  EXPECT_EQ(c229->bus_id, "c3000");
}

TEST(ParsersNccl, ParsesInitCompleteOfEveryEra) {
  auto c216 =
      parse_nccl_comm("comm 0x7f1c9c002f00 rank 0 nranks 4 cudaDev 0 busId 1b000 - Init COMPLETE");
  ASSERT_TRUE(c216);
  EXPECT_EQ(c216->event, "init_complete");
  EXPECT_EQ(c216->nvml_dev, -1);
  EXPECT_EQ(c216->comm_id, "");
  EXPECT_EQ(c216->bus_id, "1b000");

  auto c217 = parse_nccl_comm(
      "comm 0x7f1c9c002f00 rank 1 nranks 4 cudaDev 1 busId 1c000 commId 0x5f1b5e0f1a2b3c4d - Init "
      "COMPLETE");
  ASSERT_TRUE(c217);
  EXPECT_EQ(c217->comm_id, "0x5f1b5e0f1a2b3c4d");
  EXPECT_EQ(c217->cuda_dev, 1);

  auto c218 = parse_nccl_comm(
      "comm 0x7f1c9c002f00 rank 2 nranks 4 cudaDev 2 nvmlDev 6 busId 9a000 commId "
      "0x5f1b5e0f1a2b3c4d - Init "
      "COMPLETE");
  ASSERT_TRUE(c218);
  EXPECT_EQ(c218->nvml_dev, 6);
  EXPECT_EQ(c218->rank, 2);

  auto split = parse_nccl_comm(
      "ncclCommSplit comm 0x55bd10a1f3a0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 parent "
      "0x55bd0f7ab5d0 "
      "splitCount 1 color 1016859112 key 0 - Init COMPLETE");
  ASSERT_TRUE(split);
  EXPECT_EQ(split->api, "ncclCommSplit");
  EXPECT_EQ(split->parent, "0x55bd0f7ab5d0");
  EXPECT_EQ(split->nranks, 2);
}

TEST(ParsersNccl, ParsesTeardownEvents) {
  auto d = parse_nccl_comm(
      "comm 0x55d5a8b3c2d0 rank 0 nranks 8 cudaDev 0 busId 1b000 - Destroy COMPLETE");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->event, "destroy");
  auto a =
      parse_nccl_comm("comm 0x55d5a8b3c2d0 rank 7 nranks 8 cudaDev 7 busId df000 - Abort COMPLETE");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->event, "abort");
  EXPECT_EQ(a->rank, 7);
  auto r = parse_nccl_comm(
      "comm 0x55d5a8b3c2d0 rank 0 nRanks 8 cudaDev 0 busId 1b000 - Revoke COMPLETE, result 0");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->event, "revoke");
  EXPECT_EQ(r->nranks, 8);
}

TEST(ParsersNccl, RejectsCommLinesWithoutAnEvent) {
  // Cut off before "- Init COMPLETE".
  EXPECT_FALSE(parse_nccl_comm(
      "ncclCommInitRank comm 0x7f1c9c002f00 rank 3 nranks 16 cudaDev 3 busId 4e000"));
  EXPECT_FALSE(
      parse_nccl_comm("Init timings - ncclCommInitRankConfig: rank 0 nranks 2 total 0.64 (kernels "
                      "0.11, alloc 0.00)"));
  EXPECT_FALSE(parse_nccl_comm("Connected all rings, use ring PXN 0 GDR 1"));
  // A summary cut off before localRanks.
  EXPECT_FALSE(parse_nccl_comm("comm 0x55d5a8b3c2d0 rank 3 nRanks 16 nNodes 2 localRan"));
}

// --- COLL (A.5, F "NCCL COLL payload") -------------------------------------

TEST(ParsersNccl, ParsesCollLine) {
  auto c = parse_nccl_coll(
      "AllGather: opCount 1a sendbuff 0x7f3c2e000000 recvbuff 0x7f3c30000000 count 131072 datatype "
      "7 op 0 root 0 "
      "comm 0x55d5a8b3c2d0 [nranks=8] stream 0x55d5a8b3e4f0");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, "AllGather");
  EXPECT_EQ(c->op_count, 0x1au);  // hex, not decimal
  EXPECT_EQ(c->count, 131072);
  EXPECT_EQ(c->datatype, 7);
  EXPECT_EQ(c->redop, 0);
  EXPECT_EQ(c->root, 0);
  EXPECT_EQ(c->comm, "0x55d5a8b3c2d0");
  EXPECT_EQ(c->nranks, 8);
}

TEST(ParsersNccl, ParsesSendWithNilBufferAndPeerAsRoot) {
  auto c = parse_nccl_coll(
      "Send: opCount 0 sendbuff (nil) recvbuff 0x7f3c30000000 count 1048576 datatype 9 op 0 root 5 "
      "comm "
      "0x55d5a8b3c2d0 [nranks=2] stream 0x55d5a8b3e4f0");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, "Send");
  EXPECT_EQ(c->op_count, 0u);
  EXPECT_EQ(c->datatype, 9);
  EXPECT_EQ(c->root, 5);
  EXPECT_EQ(c->nranks, 2);
}

TEST(ParsersNccl, KeepsCollLineTruncatedAfterRoot) {
  auto c = parse_nccl_coll(
      "AllReduce: opCount ff sendbuff 0x7f3c2e000000 recvbuff 0x7f3c30000000 count 4096 datatype 6 "
      "op 4 root 0 "
      "comm 0x55d5a8b3c2d0 [nran");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op_count, 255u);
  EXPECT_EQ(c->redop, 4);
  EXPECT_EQ(c->comm, "0x55d5a8b3c2d0");
  EXPECT_EQ(c->nranks, -1);
}

TEST(ParsersNccl, RejectsCollLineTruncatedBeforeCount) {
  EXPECT_FALSE(
      parse_nccl_coll("AllReduce: opCount 1a sendbuff 0x7f3c2e000000 recvbuff 0x7f3c30000000 cou"));
  EXPECT_FALSE(parse_nccl_coll(
      "AllReduce: opCount 1a sendbuff 0x7f3c2e000000 recvbuff 0x7f3c30000000 count 12"));
  EXPECT_FALSE(parse_nccl_coll(
      "AllReduce: opCount zz sendbuff 0x1 recvbuff 0x2 count 1 datatype 7 op 0 root 0"));
  EXPECT_FALSE(parse_nccl_coll("Channel 00/32 :    0   1   2   3"));
}

// --- WARN catalog (A.8, F "IB completion") ---------------------------------

TEST(ParsersNccl, ParsesIbCompletionUpTo29) {
  auto w =
      parse_nccl_warn("NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->category, "ib_completion");
  EXPECT_EQ(w->peer, "");
  EXPECT_EQ(w->ib_status, 12);
  EXPECT_EQ(w->ib_status_name, "IBV_WC_RETRY_EXC_ERR");
  EXPECT_EQ(w->hca, "");
}

TEST(ParsersNccl, ParsesIbCompletion210To219WithPeer) {
  auto w = parse_nccl_warn(
      "NET/IB : Got completion from peer 10.0.0.2<45074> with error 4, opcode 32564, len 32564, "
      "vendor err 81");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->peer, "10.0.0.2<45074>");
  EXPECT_EQ(w->ib_status, 4);
  EXPECT_EQ(w->ib_status_name, "IBV_WC_LOC_PROT_ERR");

  auto w218 = parse_nccl_warn(
      "NET/IB : Got completion from peer 10.0.0.2<45074> with error 12, opcode 0, len 0, vendor "
      "err 129 (Recv) "
      "localGid ::ffff:10.1.1.1 remoteGid ::ffff:10.1.1.2");
  ASSERT_TRUE(w218);
  EXPECT_EQ(w218->ib_status, 12);
  EXPECT_EQ(w218->peer, "10.0.0.2<45074>");
}

TEST(ParsersNccl, ParsesIbCompletion220To228WithNumericStatus) {
  auto w220 = parse_nccl_warn(
      "NET/IB : Got completion from peer 10.0.0.2<45074> with status=12 opcode=0 len=0 vendor err "
      "129 (Recv) "
      "localGid ::ffff:10.1.1.1 remoteGids::ffff:10.1.1.2");
  ASSERT_TRUE(w220);
  EXPECT_EQ(w220->ib_status, 12);
  EXPECT_EQ(w220->ib_status_name, "IBV_WC_RETRY_EXC_ERR");
  EXPECT_EQ(w220->hca, "");

  auto w222 = parse_nccl_warn(
      "NET/IB: Got completion from peer 10.0.0.2<45074> with status=5 opcode=128 len=0 vendor err "
      "249 (Recv) "
      "localGid ::ffff:10.1.1.1 remoteGids::ffff:10.1.1.2 hca mlx5_2");
  ASSERT_TRUE(w222);
  EXPECT_EQ(w222->ib_status, 5);
  EXPECT_EQ(w222->ib_status_name, "IBV_WC_WR_FLUSH_ERR");
  EXPECT_EQ(w222->hca, "mlx5_2");
}

TEST(ParsersNccl, ParsesIbCompletion2287WithStatusName) {
  auto w = parse_nccl_warn(
      "NET/IB: Got completion from peer 10.0.0.2<45074> with status=IBV_WC_RETRY_EXC_ERR(12) "
      "opcode=IBV_WC_SEND(0) reqSize=0 vendor_err=129 req_type=Send localGid ::ffff:10.1.1.1 "
      "remoteGids::ffff:10.1.1.2 hca mlx5_10");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->category, "ib_completion");
  EXPECT_EQ(w->ib_status, 12);
  EXPECT_EQ(w->ib_status_name, "IBV_WC_RETRY_EXC_ERR");
  EXPECT_EQ(w->peer, "10.0.0.2<45074>");
  EXPECT_EQ(w->hca, "mlx5_10");

  auto w229 = parse_nccl_warn(
      "NET/IB: Got completion from peer 10.0.0.2<45074> with status=IBV_WC_REM_ACCESS_ERR(10) "
      "opcode=IBV_WC_RDMA_WRITE(1) vendor_err=136  localGid ::ffff:10.1.1.1 "
      "remoteGids::ffff:10.1.1.2 hca mlx5_3");
  ASSERT_TRUE(w229);
  EXPECT_EQ(w229->ib_status, 10);
  EXPECT_EQ(w229->ib_status_name, "IBV_WC_REM_ACCESS_ERR");
  EXPECT_EQ(w229->hca, "mlx5_3");
}

TEST(ParsersNccl, ParsesIbGinCompletion) {
  auto w = parse_nccl_warn(
      "NET/IB/GIN: Got completion from peer 10.0.0.9<50000> with status=13 opcode=0 len=0 vendor "
      "err 135 "
      "(Send) hca mlx5_0");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->ib_status, 13);
  EXPECT_EQ(w->ib_status_name, "IBV_WC_RNR_RETRY_EXC_ERR");
  EXPECT_EQ(w->peer, "10.0.0.9<50000>");
  EXPECT_EQ(w->hca, "mlx5_0");
}

TEST(ParsersNccl, RejectsIbCompletionWithoutStatus) {
  EXPECT_FALSE(parse_nccl_warn("NET/IB : Got completion from peer 10.0.0.2<45074> with"));
  EXPECT_FALSE(parse_nccl_warn("Got completion with error 12"));  // no NET/IB transport tag
}

TEST(ParsersNccl, ParsesIbAsyncEvents) {
  auto old = parse_nccl_warn("NET/IB : Got async event : port error");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->category, "ib_async");
  EXPECT_EQ(old->detail, "port error");

  auto fatal = parse_nccl_warn("NET/IB : mlx5_2:1 async fatal event: local catastrophic error");
  ASSERT_TRUE(fatal);
  EXPECT_EQ(fatal->category, "ib_async");
  EXPECT_EQ(fatal->hca, "mlx5_2");
  EXPECT_EQ(fatal->detail, "local catastrophic error");

  auto nonfatal = parse_nccl_warn("NET/IB : mlx5_4:1 Got non-fatal async event: port error(10)");
  ASSERT_TRUE(nonfatal);
  EXPECT_EQ(nonfatal->hca, "mlx5_4");
  EXPECT_EQ(nonfatal->detail, "port error(10)");
}

TEST(ParsersNccl, ParsesSocketErrorsOfEveryEra) {
  auto closed_old = parse_nccl_warn("Net : Connection closed by remote peer");
  ASSERT_TRUE(closed_old);
  EXPECT_EQ(closed_old->category, "socket");
  EXPECT_EQ(closed_old->peer, "");

  auto closed = parse_nccl_warn(
      "socketProgress: Connection closed by remote peer gpu-node1.int.example.edu<45074>");
  ASSERT_TRUE(closed);
  EXPECT_EQ(closed->category, "socket");
  EXPECT_EQ(closed->peer, "gpu-node1.int.example.edu<45074>");

  auto recv212 =
      parse_nccl_warn("Net : Call to recv from 10.0.0.2<45074> failed : Connection reset by peer");
  ASSERT_TRUE(recv212);
  EXPECT_EQ(recv212->peer, "10.0.0.2<45074>");
  EXPECT_EQ(recv212->detail, "Connection reset by peer");

  auto recv216 = parse_nccl_warn(
      "socketProgressOpt: Call to recv from ::ffff:10.0.0.2<45074> failed : Connection reset by "
      "peer");
  ASSERT_TRUE(recv216);
  EXPECT_EQ(recv216->peer, "::ffff:10.0.0.2<45074>");
  EXPECT_EQ(recv216->detail, "Connection reset by peer");

  auto send224 =
      parse_nccl_warn("socketProgressOpt: Call to send to 10.0.0.3<36001> failed : Broken pipe");
  ASSERT_TRUE(send224);
  EXPECT_EQ(send224->peer, "10.0.0.3<36001>");
  EXPECT_EQ(send224->detail, "Broken pipe");

  auto recv229 = parse_nccl_warn(
      "ncclOsSocketProgressOpt: Call to recv from 10.0.0.2<45074> failed : Software caused "
      "connection abort");
  ASSERT_TRUE(recv229);
  EXPECT_EQ(recv229->peer, "10.0.0.2<45074>");
  EXPECT_EQ(recv229->detail, "Software caused connection abort");

  auto connect =
      parse_nccl_warn("socketStartConnect: Connect to 10.0.0.4<60123> failed : Connection refused");
  ASSERT_TRUE(connect);
  EXPECT_EQ(connect->peer, "10.0.0.4<60123>");
  EXPECT_EQ(connect->detail, "Connection refused");

  auto retries = parse_nccl_warn("socketStartConnect: exceeded retries (34)");
  ASSERT_TRUE(retries);
  EXPECT_EQ(retries->category, "socket");

  auto truncated = parse_nccl_warn("message truncated : receiving 1048576 bytes instead of 65536");
  ASSERT_TRUE(truncated);
  EXPECT_EQ(truncated->category, "socket");
  EXPECT_EQ(truncated->detail, "receiving 1048576 bytes instead of 65536");

  auto no_iface = parse_nccl_warn("Bootstrap : no socket interface found");
  ASSERT_TRUE(no_iface);
  EXPECT_EQ(no_iface->category, "socket");
}

TEST(ParsersNccl, ParsesCudaFailureWithAndWithoutResultNumber) {
  auto driver = parse_nccl_warn("Cuda failure 1 'invalid argument'");
  ASSERT_TRUE(driver);
  EXPECT_EQ(driver->category, "cuda");
  EXPECT_EQ(driver->detail, "invalid argument");
  auto runtime = parse_nccl_warn("Cuda failure 'an illegal memory access was encountered'");
  ASSERT_TRUE(runtime);
  EXPECT_EQ(runtime->category, "cuda");
  EXPECT_EQ(runtime->detail, "an illegal memory access was encountered");
}

TEST(ParsersNccl, ParsesDuplicateGpuAndItsSuccessor) {
  auto dup = parse_nccl_warn("Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000");
  ASSERT_TRUE(dup);
  EXPECT_EQ(dup->category, "duplicate_gpu");
  EXPECT_EQ(dup->detail, "Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000");
  auto multi = parse_nccl_warn(
      "Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable "
      "this "
      "configuration.");
  ASSERT_TRUE(multi);
  EXPECT_EQ(multi->category, "duplicate_gpu");
}

TEST(ParsersNccl, CategorisesOtherWarnings) {
  EXPECT_EQ(parse_nccl_warn(
                "Mismatched NCCL version detected : rank 0 version 21805 rank 8 version 21903")
                ->category,
            "version_mismatch");
  EXPECT_EQ(parse_nccl_warn(
                "[Service thread] Error encountered progressing operation=Connect, res=3, closing "
                "connection")
                ->category,
            "proxy");
  EXPECT_EQ(parse_nccl_warn(
                "[Proxy Service 3] Failed to execute operation Connect from rank 3, retcode 3")
                ->category,
            "proxy");
  EXPECT_EQ(parse_nccl_warn("Error : ring 1 does not loop back to start (3 != 0)")->category,
            "topology");
  auto other = parse_nccl_warn("Some new warning nobody has seen");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->category, "other");
  EXPECT_EQ(other->detail, "Some new warning nobody has seen");
}

// --- error trace (A.4, F "NCCL error trace") --------------------------------

TEST(ParsersNccl, ParsesErrorTraceOfEveryEra) {
  auto t = parse_nccl_error_trace("transport/net_socket.cc:474 -> 6");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->src_file, "transport/net_socket.cc");
  EXPECT_EQ(t->src_line, 474);
  EXPECT_EQ(t->result, 6);

  auto func = parse_nccl_error_trace("init.cc:1234 (initTransportsRank) -> 3");
  ASSERT_TRUE(func);
  EXPECT_EQ(func->src_file, "init.cc");
  EXPECT_EQ(func->src_line, 1234);
  EXPECT_EQ(func->result, 3);

  auto strerr = parse_nccl_error_trace("misc/socket.cc:484 -> 2 (Connection refused)");
  ASSERT_TRUE(strerr);
  EXPECT_EQ(strerr->result, 2);

  auto thread = parse_nccl_error_trace("proxy.cc:1495 -> 6 [Progress Thread]");
  ASSERT_TRUE(thread);
  EXPECT_EQ(thread->src_file, "proxy.cc");
  EXPECT_EQ(thread->result, 6);
}

TEST(ParsersNccl, DoesNotTakeRingOrChannelArrowsForErrorTraces) {
  EXPECT_FALSE(parse_nccl_error_trace("Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read"));
  EXPECT_FALSE(parse_nccl_error_trace("Ring 00 : 7 -> 0 -> 1"));
  EXPECT_FALSE(parse_nccl_error_trace("Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1"));
  EXPECT_FALSE(parse_nccl_error_trace("init.cc:1234 -> x"));
}

// --- transports and channels (A.3) ------------------------------------------

TEST(ParsersNccl, RecognisesNetworkSetupLines) {
  EXPECT_TRUE(is_nccl_network_line("Using network IB"));
  EXPECT_TRUE(is_nccl_network_line(
      "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>"));
  EXPECT_TRUE(is_nccl_network_line("Bootstrap : Using eth0:10.0.0.1<0>"));
  EXPECT_TRUE(is_nccl_network_line("Bootstrap: Using ib0:10.1.0.1<0>"));
  EXPECT_TRUE(is_nccl_network_line(
      "NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin."));
  EXPECT_TRUE(is_nccl_network_line("NET/Socket : Using [0]eth0:10.0.0.1<0>"));
  EXPECT_FALSE(is_nccl_network_line("Channel 00/32 :    0   1   2   3"));
  // NCCL prints some failures at INFO too: those are no transport choice.
  EXPECT_FALSE(is_nccl_network_line("NET/IB: mlx5_0: Port recovery failed for mlx5_0 comm=0x7f3a devIndex=3"));
  EXPECT_FALSE(is_nccl_network_line("NET/OFI Failed to initialize sendrecv protocol"));
  EXPECT_FALSE(is_nccl_network_line("NET/IB : Got async ERROR event: port error"));
  EXPECT_FALSE(is_nccl_network_line("Bootstrap : connection closed by peer, retrying"));
  EXPECT_TRUE(reports_failure("socketPollConnect: connect returned Connection refused, retrying (1/34)"));
  EXPECT_FALSE(reports_failure("NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>"));
}

TEST(ParsersNccl, RecognisesChannelAndTreeLines) {
  EXPECT_TRUE(is_nccl_channel_line("Channel 00/32 :    0   1   2   3"));
  EXPECT_TRUE(is_nccl_channel_line("Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read"));
  EXPECT_TRUE(is_nccl_channel_line("Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1"));
  EXPECT_TRUE(is_nccl_channel_line("Connected all rings, use ring PXN 0 GDR 1"));
  EXPECT_TRUE(is_nccl_channel_line("Connected all trees"));
  EXPECT_FALSE(is_nccl_channel_line("Using network IB"));
}

TEST(ParsersNccl, ReadsTheVersionPyTorchNamesInItsNcclErrors) {
  auto v = parse_embedded_nccl_version(
      "RuntimeError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:784, unhandled cuda "
      "error, NCCL version 2.7.8");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->version, "2.7.8");
  EXPECT_EQ(v->cuda, "");
  EXPECT_FALSE(parse_embedded_nccl_version("NCCL error in: ProcessGroupNCCL.cpp:784, unhandled cuda error"));
}

TEST(ParsersNccl, ReadsTheVersionVllmAndSglangSayTheyLoaded) {
  auto v = parse_framework_nccl_version("INFO 08-12 20:26:09 [pynccl.py:113] vLLM is using nccl==2.28.9");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->version, "2.28.9");
  ASSERT_TRUE(parse_framework_nccl_version("sglang is using nccl==2.21.5"));
  EXPECT_EQ(parse_framework_nccl_version("sglang is using nccl==2.21.5")->version, "2.21.5");
  EXPECT_FALSE(parse_framework_nccl_version("vLLM is using nccl==unknown"));
  EXPECT_FALSE(parse_framework_nccl_version("vLLM is using the V1 engine"));
}

}  // namespace
}  // namespace ncclpm::recognize
