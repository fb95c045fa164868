"""Builds benchmarks/judge/data/rag_zh.jsonl: a labelled Chinese RAG set over a small knowledge base written
for it (an employee table with duplicate names, HR/expense policies with numbers and exceptions). Issue 29.

Every question has a correct and a wrong retrieval (the wrong one is the confusable chunk: the other 张伟's row,
the 请假 article for a 年假 question, the 报销流程 article for a 住宿 question …) and four answers: faithful,
inventing (the faithful answer plus one invented fact), omitting (one of the ground truth's two facts left out),
and the answer a bot gives from the wrong retrieval. The labels follow from how each text was written, and are
fixed here, before any judge has seen the set. Every other question (by position) is held out.

    python benchmarks/pipeline/rag_zh_build.py          # rewrites the jsonl (deterministic)
"""
from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "judge" / "data" / "rag_zh.jsonl"

# --- employee table: one row per chunk, key field 工号 -------------------------------------------------------------
EMPLOYEES = [
    # 工号, 姓名, 部门, 职位, 分机, 办公地点, 入职年份
    ("E1023", "张伟", "教研部", "课程研发工程师", "8123", "A座5楼", "2019"),
    ("E2041", "张伟", "市场部", "品牌经理", "8311", "B座2楼", "2016"),
    ("E1107", "李娜", "财务部", "会计主管", "8205", "A座3楼", "2015"),
    ("E3012", "李娜", "人事部", "招聘专员", "8402", "A座2楼", "2021"),
    ("E1230", "王芳", "技术部", "后端工程师", "8530", "C座6楼", "2020"),
    ("E2288", "王芳", "客服部", "客服组长", "8617", "B座1楼", "2018"),
    ("E1456", "刘洋", "销售部", "大客户经理", "8702", "B座3楼", "2017"),
    ("E3320", "刘洋", "技术部", "测试工程师", "8538", "C座6楼", "2022"),
    ("E1789", "陈静", "行政部", "行政专员", "8801", "A座1楼", "2019"),
    ("E2905", "陈静", "法务部", "法务顾问", "8903", "A座4楼", "2014"),
]


def row_text(e: tuple) -> str:
    return (f"员工信息表｜工号：{e[0]}｜姓名：{e[1]}｜部门：{e[2]}｜职位：{e[3]}｜分机：{e[4]}｜"
            f"办公地点：{e[5]}｜入职年份：{e[6]}")


# For each employee question: (employee index, the other same-name employee index, two asked fields)
FIELD = {"工号": 0, "职位": 3, "分机": 4, "办公地点": 5, "入职年份": 6}
INVENTED_PERSON = ["他目前在外地出差，下周一回来。", "她本周在休年假。", "他同时兼任部门的安全员。",
                   "她的直属上级是部门总监赵敏。", "他的工位在靠窗的第三排。"]

EMPLOYEE_QUESTIONS = [
    (0, 1, ("分机", "办公地点")), (1, 0, ("职位", "分机")), (2, 3, ("职位", "分机")), (3, 2, ("工号", "办公地点")),
    (4, 5, ("职位", "入职年份")), (5, 4, ("分机", "办公地点")), (6, 7, ("职位", "分机")), (7, 6, ("工号", "入职年份")),
    (8, 9, ("分机", "办公地点")), (9, 8, ("职位", "入职年份")), (0, 1, ("工号", "入职年份")), (2, 3, ("办公地点", "入职年份")),
    (4, 5, ("工号", "分机")), (6, 7, ("办公地点", "入职年份")), (8, 9, ("工号", "职位")), (1, 0, ("工号", "办公地点")),
    (3, 2, ("职位", "入职年份")), (5, 4, ("工号", "职位")), (7, 6, ("职位", "办公地点")), (9, 8, ("工号", "分机")),
]


def field_phrase(name: str, value: str) -> str:
    return {"工号": f"工号是{value}", "职位": f"职位是{value}", "分机": f"分机是{value}",
            "办公地点": f"在{value}办公", "入职年份": f"{value}年入职"}[name]


def employee_items() -> list[dict]:
    items = []
    for n, (i, j, (f1, f2)) in enumerate(EMPLOYEE_QUESTIONS):
        e, other = EMPLOYEES[i], EMPLOYEES[j]
        who = f"{e[2]}的{e[1]}"
        q = f"{who}的{f1}和{f2}分别是什么？" if f2 != "办公地点" else f"{who}的{f1}是什么？在哪里办公？"
        a1, a2 = field_phrase(f1, e[FIELD[f1]]), field_phrase(f2, e[FIELD[f2]])
        w1, w2 = field_phrase(f1, other[FIELD[f1]]), field_phrase(f2, other[FIELD[f2]])
        distractor = row_text(EMPLOYEES[(i + 4) % len(EMPLOYEES)])
        items.append({
            "topic": "employee", "question": q,
            "ground_truth": f"{who}{a1}，{a2}。",
            "correct_chunk": row_text(e), "wrong_chunk": row_text(other), "distractor": distractor,
            "answers": {"faithful": f"{who}{a1}，{a2}。",
                        "inventing": f"{who}{a1}，{a2}。{INVENTED_PERSON[n % len(INVENTED_PERSON)]}",
                        "omitting": f"{who}{a1}。",
                        "wrong_retrieval": f"{e[1]}{w1}，{w2}。"}})
    return items


# --- policies: one article per chunk ----------------------------------------------------------------------------
POLICY = {
    "annual": "年假制度：员工入职满1年不满10年的，每年享有带薪年假5天；满10年不满20年的，年假10天；满20年的，年假15天。"
              "试用期员工不享受年假。年假需至少提前3个工作日在OA系统申请。当年未休完的年假可顺延至次年3月31日，逾期作废。",
    "leave": "请假制度：病假须提供二级及以上医院出具的诊断证明。病假3天以内由直属主管审批，超过3天须部门负责人审批。"
             "事假每年累计不超过10天，事假期间按日扣除工资。请假须在OA系统提交，紧急情况可先电话报备，返岗后2日内补办手续。",
    "hotel": "差旅住宿标准：出差到一线城市（北京、上海、广州、深圳）每晚住宿费上限600元，其他城市每晚上限400元。"
             "总监及以上职级可上浮50%。超出标准的部分由员工自付。报销住宿费须提供酒店增值税发票和住宿水单。",
    "claims": "费用报销流程：费用发生后30天内须在财务系统提交报销单，逾期不予受理。单笔金额超过5000元的须财务总监审批。"
              "报销款在审批通过后5个工作日内转入工资卡。电子发票须上传PDF原件，截图无效。",
    "overtime": "加班管理规定：工作日加班按1.5倍工资计算；休息日加班可选择2倍工资或等时调休；法定节假日加班按3倍工资计算，"
                "不安排调休。每月加班累计不得超过36小时。加班须提前在OA系统提交申请并经主管批准，未申请的不计加班。",
    "meals": "餐补与出差补助：每个工作日发放餐补30元；当天加班至21点以后的，额外发放晚餐补贴20元。"
             "出差期间每天发放伙食补助100元，出差期间不再发放餐补。补贴随当月工资发放。",
    "parental": "生育假规定：女员工产假158天，其中国家规定98天、本市奖励60天；难产的增加15天；多胞胎生育的，每多生育一个婴儿增加15天。"
                "男员工陪产假15天，须在配偶生育后30天内连续休完。",
    "remote": "远程办公规定：经主管同意，员工每周最多可远程办公2天，须提前1天在OA系统申请。试用期员工不可申请远程办公。"
              "远程办公期间，每天10点至16点为核心在线时段，须保持即时通讯在线。",
    "equipment": "办公设备规定：公司配发的笔记本电脑每3年可申请更换一次。研发岗位配置32G内存笔记本，其他岗位配置16G内存笔记本。"
                 "设备丢失的，员工须按折旧后的剩余价值赔偿。离职时须在最后工作日前归还全部设备。",
    "training": "培训管理规定：每位员工每年培训预算为3000元。参加单次费用超过5000元的外部培训，须签订1年服务期协议；"
                "服务期内离职的，按未履行月数比例退还培训费。内部培训不占用个人培训预算。",
}
# The confusable article a weak retriever returns instead, and a distractor shown beside either retrieval.
WRONG_OF = {"annual": "leave", "leave": "annual", "hotel": "claims", "claims": "hotel", "overtime": "meals",
            "meals": "overtime", "parental": "leave", "remote": "overtime", "equipment": "training",
            "training": "claims"}
DISTRACTOR_OF = {"annual": "equipment", "leave": "remote", "hotel": "parental", "claims": "remote",
                 "overtime": "equipment", "meals": "parental", "parental": "training", "remote": "meals",
                 "equipment": "leave", "training": "hotel"}

# (article, question, fact 1, fact 2, invented sentence, answer from the wrong article)
POLICY_QUESTIONS = [
    ("annual", "我入职满3年了，一年有几天年假？需要提前多久申请？", "入职满1年不满10年的员工每年有5天带薪年假",
     "年假需至少提前3个工作日在OA系统申请", "年假还可以折算成现金发放。", "事假每年累计不超过10天，请假须在OA系统提交。"),
    ("annual", "今年没休完的年假能留到明年吗？试用期有年假吗？", "当年未休完的年假可顺延至次年3月31日，逾期作废",
     "试用期员工不享受年假", "顺延的年假最多可保留5天。", "紧急情况可先电话报备，返岗后2日内补办手续。"),
    ("annual", "工作满20年的员工有多少天年假？满10年呢？", "满20年的员工年假15天", "满10年不满20年的员工年假10天",
     "满20年的员工还额外享有2天生日假。", "事假每年累计不超过10天。"),
    ("leave", "病假超过3天由谁审批？需要什么证明？", "病假超过3天须部门负责人审批", "病假须提供二级及以上医院出具的诊断证明",
     "病假期间工资按80%发放。", "年假需至少提前3个工作日在OA系统申请。"),
    ("leave", "事假一年最多能请几天？事假扣工资吗？", "事假每年累计不超过10天", "事假期间按日扣除工资",
     "事假超过5天需要总经理签字。", "员工入职满1年不满10年的，每年享有带薪年假5天。"),
    ("leave", "突然生病来不及在系统请假怎么办？", "紧急情况可先电话报备", "返岗后2日内在OA系统补办请假手续",
     "补办时还需要提交书面检讨。", "年假需至少提前3个工作日在OA系统申请，未休完的可顺延至次年3月31日。"),
    ("hotel", "去上海出差，住宿每晚能报多少钱？超了怎么办？", "一线城市（含上海）每晚住宿费上限600元", "超出标准的部分由员工自付",
     "超标不超过100元的可以由部门经理特批报销。", "费用发生后30天内须提交报销单，单笔超过5000元须财务总监审批。"),
    ("hotel", "去成都出差住宿标准是多少？总监有不同吗？", "其他城市（如成都）每晚住宿费上限400元", "总监及以上职级可上浮50%",
     "总监还可以报销行政酒廊费用。", "报销款在审批通过后5个工作日内转入工资卡。"),
    ("hotel", "报销住宿费需要提供哪些材料？", "须提供酒店增值税发票", "须提供住宿水单",
     "还需要提供出差审批单的纸质签字版。", "电子发票须上传PDF原件，截图无效。"),
    ("claims", "报销单最晚什么时候要提交？", "费用发生后30天内须在财务系统提交报销单", "逾期不予受理",
     "特殊情况可以申请延期15天。", "出差到一线城市每晚住宿费上限600元，其他城市400元。"),
    ("claims", "报销款多久能到账？打到哪里？", "报销款在审批通过后5个工作日内到账", "报销款转入工资卡",
     "加急的报销可以当天到账。", "超出住宿标准的部分由员工自付。"),
    ("claims", "一笔6000元的费用报销需要谁审批？电子发票可以用截图吗？", "单笔金额超过5000元的须财务总监审批",
     "电子发票须上传PDF原件，截图无效", "6000元以上还需要总经理复核。", "总监及以上职级住宿标准可上浮50%。"),
    ("overtime", "周末加班怎么算工资？", "休息日加班可选择2倍工资", "也可以选择等时调休",
     "周末加班还额外发放交通补贴50元。", "每个工作日发放餐补30元，加班至21点以后额外发放晚餐补贴20元。"),
    ("overtime", "国庆节加班给几倍工资？可以调休吗？", "法定节假日加班按3倍工资计算", "法定节假日加班不安排调休",
     "国庆节加班满3天可以额外获得1天年假。", "出差期间每天发放伙食补助100元。"),
    ("overtime", "每个月最多能加班多少小时？加班要申请吗？", "每月加班累计不得超过36小时", "加班须提前在OA系统提交申请并经主管批准",
     "超过36小时的部分按2倍工资补发。", "补贴随当月工资发放。"),
    ("meals", "加班到晚上10点有晚餐补贴吗？多少钱？", "当天加班至21点以后额外发放晚餐补贴20元", "每个工作日另有餐补30元",
     "晚餐补贴也可以直接在公司食堂刷卡使用。", "工作日加班按1.5倍工资计算。"),
    ("meals", "出差的时候还有餐补吗？", "出差期间每天发放伙食补助100元", "出差期间不再发放餐补",
     "出差到一线城市伙食补助提高到150元。", "每月加班累计不得超过36小时。"),
    ("meals", "餐补是怎么发的？每天多少？", "每个工作日发放餐补30元", "补贴随当月工资发放",
     "餐补每季度末统一发放一次。", "休息日加班可选择2倍工资或等时调休。"),
    ("parental", "女员工产假一共多少天？难产呢？", "女员工产假158天", "难产的增加15天",
     "产假期间还发放每月500元营养补贴。", "病假须提供二级及以上医院出具的诊断证明。"),
    ("parental", "男员工有陪产假吗？什么时候休？", "男员工陪产假15天", "须在配偶生育后30天内连续休完",
     "陪产假也可以分两次休完。", "事假每年累计不超过10天，事假期间按日扣除工资。"),
    ("parental", "生双胞胎产假有多少天？", "女员工产假158天", "多胞胎生育的每多生育一个婴儿增加15天",
     "双胞胎还可以额外申请1个月的育儿假。", "病假3天以内由直属主管审批。"),
    ("remote", "每周能远程办公几天？怎么申请？", "经主管同意每周最多可远程办公2天", "须提前1天在OA系统申请",
     "远程办公当天不发放餐补。", "加班须提前在OA系统提交申请并经主管批准。"),
    ("remote", "试用期可以远程办公吗？", "试用期员工不可申请远程办公", "转正后经主管同意每周最多可远程办公2天",
     "试用期满3个月后可以特批远程办公。", "每月加班累计不得超过36小时。"),
    ("remote", "远程办公的时候有什么要求？", "每天10点至16点为核心在线时段", "核心时段须保持即时通讯在线",
     "远程办公期间须每天提交书面工作日报。", "每个工作日发放餐补30元。"),
    ("equipment", "笔记本电脑多久能换一次？研发岗配多大内存？", "笔记本电脑每3年可申请更换一次", "研发岗位配置32G内存笔记本",
     "研发岗位还可以申请第二块显示器。", "每位员工每年培训预算为3000元。"),
    ("equipment", "公司电脑丢了要赔吗？怎么赔？", "设备丢失的员工须赔偿", "按折旧后的剩余价值赔偿",
     "赔偿可以从当月绩效奖金中分期扣除。", "服务期内离职的按未履行月数比例退还培训费。"),
    ("equipment", "离职的时候电脑要怎么处理？非研发岗配什么电脑？", "离职时须在最后工作日前归还全部设备",
     "其他岗位配置16G内存笔记本", "离职员工可以按残值价格购买电脑。", "内部培训不占用个人培训预算。"),
    ("training", "每年的培训预算有多少？内部培训算吗？", "每位员工每年培训预算为3000元", "内部培训不占用个人培训预算",
     "未用完的培训预算可以累计到下一年。", "单笔金额超过5000元的费用须财务总监审批。"),
    ("training", "参加一个8000元的外部培训有什么要求？", "单次费用超过5000元的外部培训须签订1年服务期协议",
     "服务期内离职的按未履行月数比例退还培训费", "还需要在培训结束后做一次内部分享。", "费用发生后30天内须在财务系统提交报销单。"),
    ("training", "签了培训服务期，提前离职要退钱吗？", "服务期内离职的须退还培训费", "按未履行月数比例退还",
     "退还的培训费可以分12个月从工资中扣除。", "超出住宿标准的部分由员工自付。"),
    ("annual", "年假需要在哪个系统申请？最晚提前几天？", "年假须在OA系统申请", "年假需至少提前3个工作日申请",
     "年假申请还需要抄送人事部邮箱。", "病假3天以内由直属主管审批，超过3天须部门负责人审批。"),
    ("claims", "电子发票怎么上传？报销有时间限制吗？", "电子发票须上传PDF原件，截图无效", "费用发生后30天内须提交报销单",
     "纸质发票须在月底前寄到财务部。", "报销住宿费须提供酒店增值税发票和住宿水单。"),
    ("hotel", "去深圳出差，总监每晚住宿上限是多少？", "深圳属于一线城市，住宿费上限为每晚600元", "总监及以上职级可上浮50%，即每晚900元",
     "总监出差还可以报销商务舱机票。", "报销款在审批通过后5个工作日内转入工资卡。"),
    ("overtime", "工作日晚上加班怎么算钱？没申请的加班算吗？", "工作日加班按1.5倍工资计算", "未申请的不计加班",
     "工作日加班超过2小时可以第二天晚到1小时。", "当天加班至21点以后的，额外发放晚餐补贴20元。"),
    ("parental", "陪产假最晚什么时候要休完？有几天？", "陪产假须在配偶生育后30天内连续休完", "男员工陪产假15天",
     "陪产假期间还发放1000元慰问金。", "紧急情况可先电话报备，返岗后2日内补办手续。"),
    ("leave", "病假两天谁来批？", "病假3天以内由直属主管审批", "请假须在OA系统提交",
     "病假两天以内不需要医院证明。", "年假需至少提前3个工作日在OA系统申请。"),
    ("remote", "远程办公需要谁同意？每周上限几天？", "远程办公须经主管同意", "每周最多可远程办公2天",
     "每月远程办公累计不得超过6天。", "休息日加班可选择2倍工资或等时调休。"),
    ("training", "内部培训要不要花我的培训预算？预算每年多少？", "内部培训不占用个人培训预算", "每位员工每年培训预算为3000元",
     "外部培训每年最多报销两次。", "报销款在审批通过后5个工作日内转入工资卡。"),
    ("meals", "补贴是单独发还是跟工资一起发？出差补助每天多少？", "补贴随当月工资发放", "出差期间每天发放伙食补助100元",
     "出差补助须在回来后7天内单独申请。", "工作日加班按1.5倍工资计算；法定节假日加班按3倍工资计算。"),
    ("equipment", "研发岗和其他岗位的笔记本配置有什么区别？", "研发岗位配置32G内存笔记本", "其他岗位配置16G内存笔记本",
     "研发岗位的笔记本每2年就可以更换。", "每位员工每年培训预算为3000元。"),
]


def policy_items() -> list[dict]:
    items = []
    for article, q, f1, f2, invented, wrong in POLICY_QUESTIONS:
        truth = f"{f1}；{f2}。"
        items.append({
            "topic": article, "question": q, "ground_truth": truth,
            "correct_chunk": POLICY[article], "wrong_chunk": POLICY[WRONG_OF[article]],
            "distractor": POLICY[DISTRACTOR_OF[article]],
            "answers": {"faithful": f"根据公司规定，{f1}；{f2}。",
                        "inventing": f"根据公司规定，{f1}；{f2}。另外，{invented}",
                        "omitting": f"根据公司规定，{f1}。",
                        "wrong_retrieval": f"根据公司规定，{wrong}"}})
    return items


# What each answer is, by construction (labels fixed before any run).
ANSWER_LABELS = {
    # answer kind: (faithful to the contexts it was written from, complete w.r.t. the ground truth)
    "faithful": {"faithful": True, "complete": True},
    "inventing": {"faithful": False, "complete": True},
    "omitting": {"faithful": True, "complete": False},
    "wrong_retrieval": {"faithful": True, "complete": False},   # faithful to the wrong chunk, wrong for the user
}


def build() -> list[dict]:
    rows = []
    items = employee_items() + policy_items()
    for n, item in enumerate(items, start=1):
        rows.append({
            "id": f"rag{n:03d}", "split": "heldout" if n % 2 == 0 else "dev", **item,
            "retrievals": {"correct": [item["correct_chunk"], item["distractor"]],
                           "wrong": [item["wrong_chunk"], item["distractor"]]},
            "reference_contexts": [item["correct_chunk"]],
            "answer_labels": ANSWER_LABELS})
    return rows


def main() -> None:
    rows = build()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} questions → {OUT}")


if __name__ == "__main__":
    main()
