"""A small OpenFlow 1.0 controller app for os-ken (Debian python3-os-ken), run by
tests/cli/test_switch.py against warpath's agent: every PACKET_IN is answered with a PACKET_OUT
of the packet out of port 2 and a flow for its destination MAC (idle_timeout 30), so the rest of
that destination's packets are switched without the controller. It logs one line per event."""
from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import MAIN_DISPATCHER, set_ev_cls
from os_ken.lib.packet import ethernet, packet
from os_ken.ofproto import ofproto_v1_0


class Forward(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_0.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.installed = set()

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in(self, ev):
        msg = ev.msg
        dp = msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        print("PACKET_IN in_port=%d dst=%s len=%d" % (msg.in_port, eth.dst, len(msg.data)), flush=True)
        actions = [parser.OFPActionOutput(2)]
        dp.send_msg(parser.OFPPacketOut(datapath=dp, buffer_id=0xFFFFFFFF, in_port=msg.in_port,
                                        actions=actions, data=msg.data))
        if eth.dst not in self.installed:
            self.installed.add(eth.dst)
            match = parser.OFPMatch(in_port=msg.in_port, dl_dst=eth.dst)
            dp.send_msg(parser.OFPFlowMod(datapath=dp, match=match, cookie=0,
                                          command=ofp.OFPFC_ADD, idle_timeout=30, hard_timeout=0,
                                          priority=100, flags=ofp.OFPFF_SEND_FLOW_REM,
                                          actions=actions))
            print("FLOW_MOD dl_dst=%s" % eth.dst, flush=True)
