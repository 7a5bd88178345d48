"""The ns-3 half of the TCP cross-check (docs/validation.md).

Runs in a Python that has ns-3's bindings (``pip install ns3``; ns-3.44),
not atmlab's: ``ns3_crosscheck.py`` starts it as a subprocess with one case
as JSON on stdin and reads one JSON document from stdout. The simulation is
ns-3's own C++ (TcpSocketBase, PointToPointNetDevice, DropTailQueue,
ReceiveListErrorModel); the few lines of C++ below, compiled by cppyy, only
wire the topology, keep a greedy sender's buffer full and record the trace
sources (Python callbacks cannot be connected to ns-3 trace sources).

Case keys (all numbers in base units: bit/s, s, bytes, packets):
  variant         "reno" | "newreno" | "sack"
  access_rate, access_delay, bottleneck_rate, bottleneck_delay
  mtu, mss, window, initial_cwnd, initial_ssthresh
  queue_packets   the bottleneck's drop-tail queue (packets waiting)
  drop            0-based indices of the packets the receiver's device
                  drops (ReceiveListErrorModel)
  min_rto, clock_granularity, duration
"""

from __future__ import annotations

import json
import sys

CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"

namespace xcheck {
using namespace ns3;

struct Trace {
    std::vector<double> cwnd_t; std::vector<double> cwnd;
    std::vector<double> ssth_t; std::vector<double> ssth;
    std::vector<double> state_t; std::vector<int> state;
    std::vector<double> tx_t; std::vector<double> tx_seq; std::vector<double> tx_len;
    std::vector<double> rx_t; std::vector<double> rx_bytes;
    std::vector<double> drop_t; std::vector<double> drop_seq;
    std::vector<double> qdrop_t;
    double delivered = 0;
};
Trace T;

void Cwnd(uint32_t, uint32_t v) { T.cwnd_t.push_back(Simulator::Now().GetSeconds()); T.cwnd.push_back(v); }
void Ssth(uint32_t, uint32_t v) { T.ssth_t.push_back(Simulator::Now().GetSeconds()); T.ssth.push_back(v); }
void State(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t v) {
    T.state_t.push_back(Simulator::Now().GetSeconds()); T.state.push_back(int(v));
}
void Tx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    if (p->GetSize() == 0) return;
    T.tx_t.push_back(Simulator::Now().GetSeconds());
    T.tx_seq.push_back(h.GetSequenceNumber().GetValue());
    T.tx_len.push_back(p->GetSize());
}
void Rx(Ptr<const Packet> p, const Address&) {
    T.delivered += p->GetSize();
    T.rx_t.push_back(Simulator::Now().GetSeconds()); T.rx_bytes.push_back(T.delivered);
}
void Dropped(Ptr<const Packet> p) {
    Ptr<Packet> c = p->Copy();
    PppHeader ppp; c->RemoveHeader(ppp);
    Ipv4Header ip; c->RemoveHeader(ip);
    TcpHeader tcp; c->RemoveHeader(tcp);
    T.drop_t.push_back(Simulator::Now().GetSeconds());
    T.drop_seq.push_back(c->GetSize() > 0 ? double(tcp.GetSequenceNumber().GetValue()) : -1.0);
}
void QueueDrop(Ptr<const Packet>) { T.qdrop_t.push_back(Simulator::Now().GetSeconds()); }

// A greedy application: the socket's send buffer is kept full.
uint32_t g_chunk = 0;
void Fill(Ptr<Socket> s, uint32_t) {
    while (s->GetTxAvailable() >= g_chunk) {
        if (s->Send(Create<Packet>(g_chunk)) < 0) break;
    }
}
void Connected(Ptr<Socket> s) { Fill(s, 0); }
void ConnectFailed(Ptr<Socket>) { NS_FATAL_ERROR("connection failed"); }

void Start(Ptr<Socket> s, Address to) {
    s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&Cwnd));
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(&Ssth));
    s->TraceConnectWithoutContext("CongState", MakeCallback(&State));
    s->TraceConnectWithoutContext("Tx", MakeCallback(&Tx));
    s->SetConnectCallback(MakeCallback(&Connected), MakeCallback(&ConnectFailed));
    s->SetSendCallback(MakeCallback(&Fill));
    s->Connect(to);
}

Trace& Run(std::string variant, double access_rate, double access_delay, double bn_rate,
           double bn_delay, uint32_t mtu, uint32_t mss, uint32_t window, uint32_t initial_cwnd,
           uint32_t initial_ssthresh, uint32_t queue_packets, std::vector<uint32_t> drop,
           double min_rto, double granularity, double duration) {
    T = Trace();
    g_chunk = mss;
    bool sack = variant == "sack";
    // Congestion avoidance: MSS*MSS/cwnd per ACK (TcpNewReno is RFC 5681's
    // Reno window arithmetic); recovery: RFC 6582's inflate/deflate
    // (TcpClassicRecovery), not PRR (RFC 6937, ns-3's default).
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initial_cwnd));
    Config::SetDefault("ns3::TcpSocket::InitialSlowStartThreshold", UintegerValue(initial_ssthresh));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(window));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(64 * 1024 * 1024));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(min_rto)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(Seconds(granularity)));

    NodeContainer n; n.Create(3);  // sender, router, receiver
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(access_rate))));
    access.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    access.SetChannelAttribute("Delay", TimeValue(Seconds(access_delay)));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("100000p")));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(bn_rate))));
    bottleneck.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    bottleneck.SetChannelAttribute("Delay", TimeValue(Seconds(bn_delay)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
                        QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queue_packets)));
    NetDeviceContainer a = access.Install(n.Get(0), n.Get(1));
    NetDeviceContainer b = bottleneck.Install(n.Get(1), n.Get(2));

    InternetStackHelper stack; stack.Install(n);
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.1.0", "255.255.255.0"); addr.Assign(a);
    addr.SetBase("10.0.2.0", "255.255.255.0");
    Ipv4InterfaceContainer bi = addr.Assign(b);
    // No queue discipline (Assign installs pfifo_fast, 1000 packets): the
    // device's drop-tail queue is the buffer.
    TrafficControlHelper tch;
    tch.Uninstall(a); tch.Uninstall(b);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    Ptr<ReceiveListErrorModel> em = CreateObject<ReceiveListErrorModel>();
    em->SetList(std::list<uint32_t>(drop.begin(), drop.end()));
    b.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));
    b.Get(1)->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&Dropped));
    // A full device queue stops it (flow control), and the traffic-control
    // layer drops what comes next: that is where a drop-tail overflow shows.
    bool hooked = n.Get(1)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
        "TcDrop", MakeCallback(&QueueDrop));
    hooked = hooked && b.Get(0)->TraceConnectWithoutContext("MacTxDrop", MakeCallback(&QueueDrop));
    NS_ABORT_MSG_UNLESS(hooked, "no drop trace");

    uint16_t port = 5000;
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinks = sink.Install(n.Get(2));
    sinks.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&Rx));
    sinks.Start(Seconds(0));

    Ptr<Socket> s = Socket::CreateSocket(n.Get(0), TcpSocketFactory::GetTypeId());
    s->Bind();
    Simulator::ScheduleNow(&Start, s, Address(InetSocketAddress(bi.GetAddress(1), port)));
    Simulator::Stop(Seconds(duration));
    Simulator::Run();
    Simulator::Destroy();
    return T;
}
}  // namespace xcheck
"""


def main() -> None:
    case = json.load(sys.stdin)
    from ns import ns  # noqa: PLC0415 - only in the ns-3 environment

    ns.cppyy.cppdef(CPP)
    x = ns.cppyy.gbl.xcheck
    drop = ns.cppyy.gbl.std.vector["unsigned int"]()
    for i in case["drop"]:
        drop.push_back(int(i))
    t = x.Run(
        case["variant"], case["access_rate"], case["access_delay"], case["bottleneck_rate"],
        case["bottleneck_delay"], case["mtu"], case["mss"], case["window"], case["initial_cwnd"],
        case["initial_ssthresh"], case["queue_packets"], drop, case["min_rto"],
        case["clock_granularity"], case["duration"],
    )
    out = {k: list(getattr(t, k)) for k in (
        "cwnd_t", "cwnd", "ssth_t", "ssth", "state_t", "state", "tx_t", "tx_seq", "tx_len",
        "rx_t", "rx_bytes", "drop_t", "drop_seq", "qdrop_t")}
    out["ns3_version"] = str(ns.cppyy.gbl.ns3.Version.ShortVersion()) if hasattr(
        ns.cppyy.gbl.ns3, "Version") else "3.44"
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
